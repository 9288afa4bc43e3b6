/**
 * Which time partitions the per-event table (event_log) should
 * have, and which may go (migration 070, docs/decisions/bounded-storage.md).
 * Pure: the retention sweep reads the partitions that exist and applies what
 * this plans.
 *
 *   retention.hours ──► width (a step of WIDTHS_S, about retention / 12)
 *
 *   ──[ dropped ]──[ kept ........................ ][ now ][ ahead ]──► time
 *                  ▲ end + retention <= now: drop     created before rows arrive
 *
 * A partition lives from its start to its end + retention, so a record is kept
 * for retention and at most one width more.
 */

/** A partition's range of receive times [fromMs, toMs), epoch ms UTC. */
export interface PartitionRange {
  fromMs: number;
  toMs: number;
}

/**
 * The widths a partition may have, seconds. Each divides a day, so partitions
 * of one width line up with UTC days; consecutive steps differ by at most 2.5x,
 * so a retention always gets 12 to 30 partitions (fewer only below 2 minutes).
 */
export const WIDTHS_S = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400] as const;

/** Partitions a retention is split into, at least: each adds at most 1/12 to how long a record stays. */
const PARTITIONS_PER_RETENTION = 12;

/** The widest step no larger than retention / 12 (10 s for tiny retentions, a day at most). */
export function partitionWidthMs(retentionMs: number): number {
  let width: number = WIDTHS_S[0];
  for (const w of WIDTHS_S) if (w * 1000 <= retentionMs / PARTITIONS_PER_RETENTION) width = w;
  return width * 1000;
}

/** How far ahead of now partitions exist: three widths, and three sweeps (a sweep or two may fail). */
export function aheadMs(widthMs: number, sweepIntervalMs: number): number {
  return Math.max(3 * widthMs, 3 * sweepIntervalMs);
}

function stamp(ms: number): string {
  // 2026-11-27T05:16:00.000Z → 20261127t051600
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}t${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

function parseStamp(s: string): number {
  return Date.UTC(+s.slice(0, 4), +s.slice(4, 6) - 1, +s.slice(6, 8), +s.slice(9, 11), +s.slice(11, 13), +s.slice(13, 15));
}

/** `<table>_p<from>_<to>` (UTC, to the second): the name says the range, as the migration writes it too. */
export function partitionName(table: string, range: PartitionRange): string {
  return `${table}_p${stamp(range.fromMs)}_${stamp(range.toMs)}`;
}

const NAME = /^(.+)_p(\d{8}t\d{6})_(\d{8}t\d{6})$/;

/** The range of a partition of `table` named by partitionName; null for any other name (the DEFAULT partition). */
export function parsePartitionName(table: string, name: string): PartitionRange | null {
  const m = NAME.exec(name);
  if (!m || m[1] !== table) return null;
  const range = { fromMs: parseStamp(m[2]!), toMs: parseStamp(m[3]!) };
  return range.fromMs < range.toMs ? range : null;
}

/**
 * The partitions to create so that [now rounded down to the width, now + ahead]
 * is covered, up to the next width boundary. Existing partitions are left as
 * they are and only the gaps between them are filled, cut at width
 * boundaries: a width changed by a new retention.hours lines up again after
 * one shorter partition, and a partition made far ahead (a clock that was
 * wrong) does not stop the ones for now. Gaps that end before now are left to
 * DEFAULT (only late rows could go there).
 */
export function partitionsToCreate(existing: readonly PartitionRange[], nowMs: number, widthMs: number, aheadByMs: number): PartitionRange[] {
  const start = Math.floor(nowMs / widthMs) * widthMs;
  const upper = Math.ceil((nowMs + aheadByMs) / widthMs) * widthMs;
  const out: PartitionRange[] = [];
  const fill = (from: number, to: number) => {
    if (to <= nowMs) return;
    for (let cursor = from; cursor < to; ) {
      const next = Math.min((Math.floor(cursor / widthMs) + 1) * widthMs, to);
      out.push({ fromMs: cursor, toMs: next });
      cursor = next;
    }
  };
  let cursor = start;
  for (const r of [...existing].sort((a, b) => a.fromMs - b.fromMs)) {
    if (r.toMs <= cursor) continue;
    if (r.fromMs >= upper) break;
    if (r.fromMs > cursor) fill(cursor, r.fromMs);
    cursor = r.toMs;
  }
  if (cursor < upper) fill(cursor, upper);
  return out;
}

/** The partitions entirely past retention: their newest possible record is older than now - retention. */
export function partitionsToDrop(existing: readonly PartitionRange[], nowMs: number, retentionMs: number): PartitionRange[] {
  return existing.filter((r) => r.toMs + retentionMs <= nowMs);
}
