/**
 * `perf script -i perf.data | node bench/lib/perf-owners.mjs [--top 40]`:
 * on-CPU shares of a `perf record -g` of a streamgate process (every thread,
 * kernel included), by owner and by symbol.
 *
 * Run the process with `--perf-basic-prof` (BENCH_NODE_ARGS) so JIT frames
 * carry their function and file. Each sample is charged to the nearest frame
 * from the leaf that names a JS file: ours by folder under dist/, a package
 * by name, node's own code as "node internals"; a sample with no such frame
 * is charged by thread (V8's helper threads, libuv's pool) or as "V8 runtime"
 * / "kernel" by the leaf. V8's --cpu-prof samples on a wall clock; this is
 * on-CPU time, so a syscall costs what the kernel spent in it.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { top: { type: 'string', default: '40' } } });
const top = Number(values.top);

const owners = new Map();
const leaves = new Map();
let total = 0;
let header = null;
let frames = [];

function ownerOfFile(file) {
  const dist = file.match(/\/dist\/([^/]+)\//);
  if (dist && !file.includes('node_modules')) return `ours: ${dist[1]}/`;
  const pkg = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (pkg) return pkg[1];
  if (file.startsWith('node:')) return 'node internals';
  return null;
}

function flush() {
  if (header === null) return;
  total++;
  const thread = header.comm;
  let owner = null;
  for (const f of frames) {
    const m = f.sym.match(/(node:[\w/_-]+|file:\/\/\S+|\/\S+\.m?js)(:\d+)?/);
    if (m && (f.sym.startsWith('JS:') || f.sym.startsWith('LazyCompile:') || f.sym.startsWith('Function:') || f.dso.includes('perf-') || f.dso.includes('jitted-'))) {
      owner = ownerOfFile(m[1]);
      if (owner) break;
    }
  }
  if (!owner) {
    if (/V8Worker|V8 Default/i.test(thread)) owner = 'V8 helper threads';
    else if (/libuv-worker/i.test(thread)) owner = 'libuv pool';
    else if (frames.some((f) => /Scavenge|MarkCompact|Heap::CollectGarbage|GCTracer/.test(f.sym))) owner = 'GC (main thread)';
    else if (frames[0] && frames[0].dso.includes('kernel')) owner = 'kernel, no JS frame';
    else owner = 'V8/node runtime, no JS frame';
  }
  owners.set(owner, (owners.get(owner) ?? 0) + 1);
  const leaf = frames[0] ? `${frames[0].sym.slice(0, 90)} [${frames[0].dso.split('/').pop()}]` : '?';
  leaves.set(leaf, (leaves.get(leaf) ?? 0) + 1);
  header = null;
  frames = [];
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.length === 0) {
    flush();
    continue;
  }
  if (!line.startsWith('\t') && !line.startsWith(' ')) {
    flush();
    const m = line.match(/^(.+?)\s+(\d+)(?:\/(\d+))?\s/);
    header = { comm: m ? m[1].trim() : line };
    continue;
  }
  const m = line.trim().match(/^[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)$/);
  if (m) frames.push({ sym: m[1].replace(/\+0x[0-9a-f]+$/, ''), dso: m[2] });
}
flush();

const pct = (n) => `${((100 * n) / total).toFixed(1)} %`;
console.log(`${total} samples`);
console.log('\n| owner | share |\n|---|---:|');
for (const [k, n] of [...owners].sort((a, b) => b[1] - a[1])) console.log(`| ${k} | ${pct(n)} |`);
console.log('\n| leaf symbol | share |\n|---|---:|');
for (const [k, n] of [...leaves].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`| ${k.replaceAll('|', '\\|')} | ${pct(n)} |`);
