/**
 * Reads the embedded log's LMDB store from the bench process, after the run:
 * streamgate's store caches each partition's end offset when it opens, so it
 * must be opened here only once no streamgate process has it open (a count
 * taken from a store opened earlier would be stale). Imported lazily so a
 * Kafka-only run never loads lmdb into the load generator's process.
 */
const STORE_MODULE = new URL('../../dist/log/embedded-store.js', import.meta.url).href;

/**
 * { records, endOffsets, uncommitted: { group: n } }
 *   records     records actually stored (the expected count)
 *   endOffsets  sum of the partitions' end offsets (offsets ever handed out);
 *               equal to records unless an append reserved an offset and failed
 *   uncommitted records after each group's committed offset, per group
 */
export async function inspectEmbeddedLog(dir, partitions, groups) {
  const { embeddedStore } = await import(STORE_MODULE);
  const store = embeddedStore(dir, partitions);
  try {
    let records = 0;
    let endOffsets = 0;
    const uncommitted = Object.fromEntries(groups.map((g) => [g, 0]));
    for (let p = 0; p < partitions; p++) {
      const end = store.endOffset(p);
      endOffsets += end;
      records += store.events.getKeysCount({ start: [p, 0], end: [p, Number.MAX_SAFE_INTEGER] });
      for (const g of groups) uncommitted[g] += end - (store.commits.get([g, p]) ?? 0);
    }
    return { records, endOffsets, uncommitted };
  } finally {
    await store.release();
  }
}
