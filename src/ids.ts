import { randomFillSync } from 'node:crypto';

/**
 * Public ids: a type prefix and 128 random bits in base64url (22 characters);
 * event ids also carry their receive time (newEventId).
 * Opaque, URL-safe, unguessable, never reused (docs/api.md#conventions). Random bytes are
 * drawn from a pool refilled in bulk, because ingress mints one id per event.
 */
export type IdPrefix =
  | 'lic' | 'ten' | 'cat' | 'pkg' | 'int' | 'act' | 'evt' | 'que' | 'tgt' | 'key' | 'sub' | 'run' | 'att' | 'sig' | 'rdj';

const POOL_SIZE = 16 * 512;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let offset = POOL_SIZE;

/** Reserves n fresh bytes of the pool (n <= POOL_SIZE) and returns where they start. */
function take(n: number): number {
  if (offset + n > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const start = offset;
  offset += n;
  return start;
}

export function randomBytesPooled(n: number): Buffer {
  if (n > POOL_SIZE) return randomFillSync(Buffer.allocUnsafe(n));
  const start = take(n);
  return Buffer.from(pool.subarray(start, start + n));
}

export function newId(prefix: IdPrefix): string {
  // Encoded straight from the pool: no copy of the 16 bytes first.
  const start = take(16);
  return `${prefix}_${pool.toString('base64url', start, start + 16)}`;
}

/**
 * Event ids: `evt_`, then base64url of the receive time (48-bit ms, big-endian)
 * and 96 random bits: 24 characters, a ULID's shape plus randomness
 * (docs/api.md#conventions). The time lets the events API tell an id minted moments ago,
 * whose event delivery has not consumed yet, from one that does not exist.
 */
export function newEventId(receivedAtMs: number): string {
  const start = take(18);
  // The random pool's first 6 bytes of this draw become the time: nothing else reads them.
  pool.writeUIntBE(receivedAtMs, start, 6);
  return `evt_${pool.toString('base64url', start, start + 18)}`;
}

const EVENT_ID = /^evt_[A-Za-z0-9_-]{24}$/;

/** The receive time (ms) an event id carries, or null for an id without one (older ids, or not an event id). */
export function eventIdTime(id: string): number | null {
  if (!EVENT_ID.test(id)) return null;
  return Buffer.from(id.slice(4, 12), 'base64url').readUIntBE(0, 6);
}

const ID_BODY = /^[A-Za-z0-9_-]{8,64}$/;

/** True when `value` looks like an id of `prefix` (cheap shape check, not existence). */
export function hasPrefix(value: string, prefix: IdPrefix): boolean {
  return value.startsWith(`${prefix}_`) && ID_BODY.test(value.slice(prefix.length + 1));
}
