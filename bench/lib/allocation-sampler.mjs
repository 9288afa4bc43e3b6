/**
 * A preload for a streamgate node (`BENCH_NODE_ARGS="--import ./bench/lib/allocation-sampler.mjs"`
 * with `npm run bench` or any script that starts nodes through phases/node-run.mjs):
 * V8's sampling heap profiler on the main thread, garbage included (what a CPU
 * profile calls "garbage collector" is paid for by these allocations), from
 * BENCH_ALLOC_FROM_S (8) to BENCH_ALLOC_FROM_S + BENCH_ALLOC_FOR_S (10) seconds
 * after the start, written to <BENCH_ALLOC_DIR or the temp dir>/alloc-<pid>.heapprofile.
 * `node bench/lib/allocation-summary.mjs <file>` says who allocated what.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const num = (name, def) => Number(process.env[name] ?? def);

if (isMainThread) {
  const session = new Session();
  session.connect();
  setTimeout(async () => {
    // Every 16 KiB allocated on average; V8 scales each sample up to the bytes it stands for.
    await session.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    setTimeout(async () => {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(join(process.env.BENCH_ALLOC_DIR ?? tmpdir(), `alloc-${process.pid}.heapprofile`), JSON.stringify({ ...profile, seconds: num('BENCH_ALLOC_FOR_S', 10) }));
    }, num('BENCH_ALLOC_FOR_S', 10) * 1000).unref();
  }, num('BENCH_ALLOC_FROM_S', 8) * 1000).unref();
}
