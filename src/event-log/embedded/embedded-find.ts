import type { FoundRecord } from '../event-log.js';
import { decodeEvent } from '../event-record.js';
import type { EmbeddedStore } from './embedded-store.js';

/** Records read per partition at most, past the search's start. */
const MAX_SCAN = 100_000;

/**
 * The embedded log's twin of findRecordSince: in each partition, a binary
 * search on receivedAt for the first record near `sinceMs` (offsets follow
 * arrival, give or take requests that raced), then a scan forward while the
 * records are inside the window.
 */
export function findEmbeddedSince(store: EmbeddedStore, sinceMs: number, windowMs: number, match: (value: Buffer) => boolean): FoundRecord | null {
  const receivedAt = (partition: number, offset: number): number | null => {
    const bytes = store.events.get([partition, offset]);
    if (!bytes) return null;
    try {
      return decodeEvent(bytes).receivedAt;
    } catch {
      return null;
    }
  };
  for (let partition = 0; partition < store.partitions; partition++) {
    const end = store.endOffset(partition);
    let first = -1;
    for (const key of store.events.getKeys({ start: [partition, 0], end: [partition, Number.MAX_SAFE_INTEGER], limit: 1 })) first = key[1];
    if (first === -1) continue;
    // Smallest offset whose record was received at or after sinceMs (missing or undecodable ones count as before).
    let lo = first;
    let hi = end;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const at = receivedAt(partition, mid);
      if (at !== null && at >= sinceMs) hi = mid;
      else lo = mid + 1;
    }
    for (let offset = lo, read = 0; offset < end && read < MAX_SCAN; offset++, read++) {
      const bytes = store.events.get([partition, offset]);
      if (!bytes) continue;
      if (match(bytes)) return { partition, offset: BigInt(offset), bytes };
      const at = receivedAt(partition, offset);
      if (at !== null && at > sinceMs + windowMs) break;
    }
  }
  return null;
}
