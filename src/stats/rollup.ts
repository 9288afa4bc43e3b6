import { LATENCY_BUCKETS, latencyBucket, trimmed } from './latency-buckets.js';

/** The counters of a rollup row, in the order of its columns (migration 100). */
export const ROLLUP_COUNTERS = [
  'accepted', 'delivered', 'retrying', 'failed',
  'attempts2xx', 'attempts3xx', 'attempts4xx', 'attempts5xx', 'attemptsTimeout', 'attemptsNetwork',
] as const;
export type RollupCounter = (typeof ROLLUP_COUNTERS)[number];

/** What became of a delivery attempt, as the rollups count it. */
export type AttemptEnd = 'delivered' | 'retry' | 'failed';
/** What came back from an attempt: a status class, a missed deadline, or no answer otherwise. */
export type AttemptClass = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'network';

const ACCEPTED = 0;
const END_INDEX: Record<AttemptEnd, number> = { delivered: 1, retry: 2, failed: 3 };
const CLASS_INDEX: Record<AttemptClass, number> = { '2xx': 4, '3xx': 5, '4xx': 6, '5xx': 7, timeout: 8, network: 9 };

/** One (workspace, queue, period) being counted; `at` is the period's start in epoch seconds. */
export interface RollupCell {
  tenant: string;
  queue: string;
  at: number;
  counts: number[];
  /** Accept→deliver latency histogram (latency-buckets.ts); null until something was delivered. */
  latency: number[] | null;
}

/** A cell as the repo writes it (trailing zero buckets left out). */
export interface RollupRow {
  tenant: string;
  queue: string;
  at: number;
  counts: number[];
  latency: number[];
}

/**
 * Counts in memory what ingress and delivery do, per workspace (its public
 * id), queue and minute, until the next flush takes the cells. One map lookup
 * and a few increments per event: no allocation but a cell's first use in a minute.
 */
export class Rollup {
  private cells = new Map<string, RollupCell>();

  get size(): number {
    return this.cells.size;
  }

  accepted(tenant: string, queue: string, atMs: number): void {
    this.cell(tenant, queue, atMs).counts[ACCEPTED]!++;
  }

  /** An attempt ended: how, what came back, and for a delivery, the ms since the event was accepted. */
  attempt(tenant: string, queue: string, atMs: number, end: AttemptEnd, cls: AttemptClass, latencyMs: number | null): void {
    const cell = this.cell(tenant, queue, atMs);
    cell.counts[END_INDEX[end]]!++;
    cell.counts[CLASS_INDEX[cls]]!++;
    if (end === 'delivered' && latencyMs !== null) {
      const latency = (cell.latency ??= new Array<number>(LATENCY_BUCKETS).fill(0));
      latency[latencyBucket(latencyMs)]!++;
    }
  }

  /** Everything counted so far, leaving the rollup empty. */
  take(): RollupCell[] {
    const taken = [...this.cells.values()];
    this.cells = new Map();
    return taken;
  }

  /** Cells a failed flush could not write, added back to what was counted since. */
  putBack(cells: readonly RollupCell[]): void {
    for (const c of cells) {
      const mine = this.cells.get(keyOf(c.tenant, c.queue, c.at));
      if (!mine) {
        this.cells.set(keyOf(c.tenant, c.queue, c.at), c);
        continue;
      }
      for (let i = 0; i < mine.counts.length; i++) mine.counts[i]! += c.counts[i]!;
      if (c.latency) {
        const latency = (mine.latency ??= new Array<number>(LATENCY_BUCKETS).fill(0));
        for (let i = 0; i < latency.length; i++) latency[i]! += c.latency[i]!;
      }
    }
  }

  private cell(tenant: string, queue: string, atMs: number): RollupCell {
    const at = Math.floor(atMs / 60_000) * 60;
    const key = keyOf(tenant, queue, at);
    let cell = this.cells.get(key);
    if (!cell) this.cells.set(key, (cell = { tenant, queue, at, counts: new Array<number>(ROLLUP_COUNTERS.length).fill(0), latency: null }));
    return cell;
  }
}

function keyOf(tenant: string, queue: string, at: number): string {
  return `${tenant}\n${queue}\n${at}`;
}

/**
 * Cells summed into rows of `periodSeconds` (60: minutes as counted; 3600:
 * hours), one row per (workspace, queue, period): a multi-row upsert may not
 * touch the same row twice.
 */
export function rowsOf(cells: readonly RollupCell[], periodSeconds: number): RollupRow[] {
  const rows = new Map<string, { row: RollupRow; latency: number[] | null }>();
  for (const c of cells) {
    const at = Math.floor(c.at / periodSeconds) * periodSeconds;
    const key = keyOf(c.tenant, c.queue, at);
    let entry = rows.get(key);
    if (!entry) {
      rows.set(key, (entry = { row: { tenant: c.tenant, queue: c.queue, at, counts: [...c.counts], latency: [] }, latency: c.latency ? [...c.latency] : null }));
      continue;
    }
    for (let i = 0; i < c.counts.length; i++) entry.row.counts[i]! += c.counts[i]!;
    if (c.latency) {
      const latency = (entry.latency ??= new Array<number>(LATENCY_BUCKETS).fill(0));
      for (let i = 0; i < latency.length; i++) latency[i]! += c.latency[i]!;
    }
  }
  return [...rows.values()].map(({ row, latency }) => ({ ...row, latency: latency ? trimmed(latency) : [] }));
}
