/**
 * `node bench/partition-hash.mjs [calls]` (needs `npm run build` once): the
 * Java client's murmur2, which places every keyed record in its partition, as
 * @platformatic/kafka computes it (BigInt arithmetic) against ours
 * (dist/event-log/murmur2.js, 32-bit integer arithmetic), for the
 * partition keys a sender typically uses. Alternating rounds, medians of CPU ns
 * per call (the library's allocates BigInts on every 4 bytes of the key: the
 * allocation sampler of bench/run.mjs counts them, ~480 B per appended event).
 * Results: console and bench/results/partition-hash.md.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { murmur2 } from '@platformatic/kafka';
import { murmur2 as ourMurmur2 } from '../dist/event-log/murmur2.js';

const calls = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = 5;
const shapes = {
  'customer id (14 B)': () => `customer-${String(Math.floor(Math.random() * 1e5)).padStart(5, '0')}`,
  'UUID (36 B)': () => randomUUID(),
  'composite (96 B)': () => `tenant-42/orders/${randomUUID()}/${randomUUID()}`.slice(0, 96),
};
const hashes = { library: (k) => murmur2(k), ours: (k) => ourMurmur2(k) };

function measure(hash, keys) {
  let sink = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) sink ^= hash(keys[i % keys.length]);
  const used = process.cpuUsage(start);
  return { nsPerCall: ((used.user + used.system) * 1000) / calls, sink };
}

const rows = [];
for (const [shape, make] of Object.entries(shapes)) {
  const keys = Array.from({ length: 10_000 }, () => Buffer.from(make()));
  for (const k of keys) if (murmur2(k) !== ourMurmur2(k)) throw new Error(`hashes differ for ${k}`);
  const results = { library: [], ours: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['library', 'ours'] : ['ours', 'library'];
    for (const name of order) results[name].push(measure(hashes[name], keys));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const lib = median(results.library.map((r) => r.nsPerCall));
  const ours = median(results.ours.map((r) => r.nsPerCall));
  const row = { shape, lib, ours, ratio: ours / lib };
  rows.push(row);
  console.log(`${shape}: library ${lib.toFixed(0)} ns/call, ours ${ours.toFixed(0)} ns/call: ${(row.ratio * 100).toFixed(1)} %`);
}

const out = fileURLToPath(new URL('./results/partition-hash.md', import.meta.url));
writeFileSync(out, [
  '# The partition hash: @platformatic/kafka\'s murmur2 against ours (bench/partition-hash.mjs)',
  '',
  `- date: ${new Date().toISOString()}; node ${process.version}; ${calls.toLocaleString('en')} calls per measurement over 10,000 distinct keys of each shape, ${ROUNDS} rounds alternating which goes first, medians; every key checked to hash the same first`,
  '- CPU ns per call from process.cpuUsage (the garbage the library\'s BigInts leave is collected later, mostly outside the measurement)',
  '',
  '| key shape | library ns/call | ours ns/call | ours / library |',
  '|---|---:|---:|---:|',
  ...rows.map((r) => `| ${r.shape} | ${r.lib.toFixed(0)} | ${r.ours.toFixed(0)} | ${(r.ratio * 100).toFixed(1)} % |`),
  '',
].join('\n'));
console.log(`written ${out}`);
