/**
 * `new Date(ms).toISOString()` for the delivery records, which stamps every
 * attempt: a backlog drains thousands per second, so most stamps fall in a
 * second already formatted. The "YYYY-MM-DDTHH:mm:ss." prefix of the last
 * second is kept and only the milliseconds are appended; the string is the
 * same as toISOString's.
 */
let cachedSecond = Number.NaN;
let cachedPrefix = '';

/** Four-digit years only (0000–9999): beyond them toISOString writes ±YYYYYY, which we leave to it. */
const MAX_MS = 253_402_300_800_000;

export function isoAt(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= MAX_MS) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    cachedSecond = second;
  }
  const milli = ms - second * 1000;
  return `${cachedPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
