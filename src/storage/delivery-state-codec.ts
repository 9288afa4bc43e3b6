/** What delivery last did for one (event, target) pair. */
export type DeliveryStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'blocked';

/** A delivery as event_log.deliveries keeps it (migration 090). */
export interface StoredDelivery {
  targetId: string;
  status: DeliveryStatus;
  /** When the database last wrote it, in ms after the event's receipt; null: routed, never written since. */
  updatedMs: number | null;
  /** The compact attempts text (src/storage/attempt-codec.ts). */
  attempts: string;
}

const LETTER: Record<DeliveryStatus, string> = { pending: 'p', delivered: 'd', retrying: 'r', failed: 'f', blocked: 'b' };
const STATUS: Record<string, DeliveryStatus> = { p: 'pending', d: 'delivered', r: 'retrying', f: 'failed', b: 'blocked' };

/** The letter a status is stored as. */
export function statusLetter(status: DeliveryStatus): string {
  return LETTER[status];
}

/**
 * The deliveries of one event as event_log.deliveries keeps them (migration
 * 090): one line per target, '\n' between them,
 *
 *   <target id>:<status letter>:<updated ms>:<attempts>
 *   17:d:5:[4,200,3]                         delivered at once, 16 bytes
 *   17:p::                                   routed, nothing written since
 *
 * A line's first three fields never hold ':' and its attempts are JSON
 * arrays, whose strings escape newlines: the text splits without quoting.
 * Writes go through the SQL function event_deliveries_merge (one statement, no
 * read first); the patch it takes is `encodePatch`'s.
 */
export function decodeDeliveries(text: string): StoredDelivery[] {
  if (text === '') return [];
  return text.split('\n').map((line) => {
    const a = line.indexOf(':');
    const b = line.indexOf(':', a + 1);
    const c = line.indexOf(':', b + 1);
    const updated = line.slice(b + 1, c);
    return {
      targetId: line.slice(0, a),
      status: STATUS[line.slice(a + 1, b)] ?? 'pending',
      updatedMs: updated === '' ? null : Number(updated),
      attempts: line.slice(c + 1),
    };
  });
}

/** Lines for event_deliveries_merge: each target's new status and the attempts to append (encoded). */
export function encodePatch(changes: ReadonlyArray<{ targetId: string; status: DeliveryStatus; attempts: string }>): string {
  return changes.map((c) => `${c.targetId}:${LETTER[c.status]}::${c.attempts}`).join('\n');
}

/**
 * A regular expression (Postgres ARE) that matches deliveries text holding a
 * line of this target (any target: null) with this status (any: null), with
 * one capture group: the target id or the update time (ms after receipt).
 */
export function linePattern(targetId: string | null, status: DeliveryStatus | null, capture?: 'target' | 'updated'): string {
  if (targetId !== null && !/^\d+$/.test(targetId)) throw new Error(`not a target id: ${targetId}`);
  const target = targetId ?? '\\d+';
  const letter = status === null ? '[a-z]' : LETTER[status];
  return `(?:^|\n)${capture === 'target' ? `(${target})` : target}:${letter}:${capture === 'updated' ? '(-?\\d+)' : ''}`;
}
