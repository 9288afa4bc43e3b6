/**
 * `node bench/lib/heap-diff.mjs A.heapsnapshot B.heapsnapshot [top]`: what
 * grew between two V8 heap snapshots of one process (e.g. bench/soak.mjs's
 * BENCH_HEAP_SNAPSHOTS), by constructor: objects are counted and their own
 * (shallow) bytes summed per "type: name" (strings, code and arrays per type
 * only, their names being contents), and the kinds whose bytes grew most are
 * printed first. Shallow bytes: a Map's entries show as its backing arrays.
 */
import { readFileSync } from 'node:fs';

function tally(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const at = { type: fields.indexOf('type'), name: fields.indexOf('name'), size: fields.indexOf('self_size') };
  const byKind = new Map();
  const nodes = snapshot.nodes;
  let total = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + at.type]];
    const named = type === 'object' || type === 'closure' || type === 'native';
    const kind = named ? `${type}: ${snapshot.strings[nodes[i + at.name]]}` : type;
    const size = nodes[i + at.size];
    total += size;
    const entry = byKind.get(kind) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += size;
    byKind.set(kind, entry);
  }
  return { byKind, total };
}

const [a, b, topArg] = process.argv.slice(2);
if (!a || !b) {
  process.stderr.write('usage: node bench/lib/heap-diff.mjs BEFORE.heapsnapshot AFTER.heapsnapshot [top=25]\n');
  process.exit(2);
}
const before = tally(a);
const after = tally(b);
const kinds = new Set([...before.byKind.keys(), ...after.byKind.keys()]);
const rows = [...kinds].map((kind) => {
  const x = before.byKind.get(kind) ?? { count: 0, bytes: 0 };
  const y = after.byKind.get(kind) ?? { count: 0, bytes: 0 };
  return { kind, count: y.count - x.count, bytes: y.bytes - x.bytes, after: y };
});
rows.sort((p, q) => q.bytes - p.bytes);
const kb = (n) => (n / 1024).toFixed(1);
process.stdout.write(`heap (shallow, reachable): ${kb(before.total)} KiB -> ${kb(after.total)} KiB (${kb(after.total - before.total)} KiB)\n\n`);
process.stdout.write('| kind | Δ count | Δ KiB | count after | KiB after |\n|---|---:|---:|---:|---:|\n');
for (const r of rows.slice(0, Number(topArg ?? 25))) {
  process.stdout.write(`| ${r.kind.replaceAll('|', '\\|').slice(0, 80)} | ${r.count} | ${kb(r.bytes)} | ${r.after.count} | ${kb(r.after.bytes)} |\n`);
}
