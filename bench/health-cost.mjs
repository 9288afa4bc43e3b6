/**
 * `node bench/health-cost.mjs` (needs `npm run build` once): what target
 * health counting costs a delivery node per attempt, in this process. The
 * attempt-channel message the delivery step publishes for each attempt is
 * published `n` times with the health recorder subscribed (A) and without
 * (B, the baseline: the channel with no subscriber, as a node without health
 * would run), in ABBA rounds, the best round of each kept; 1000 targets,
 * one attempt in 20 failing. The recorder's flush (one transaction every
 * delivery.healthFlushMs, off the event loop's hot path) is included once
 * per round, against a repo that does nothing: what it costs here is building
 * the batch, not the database. Reports CPU µs per attempt for A and B, and A − B.
 *
 * Results: console and bench/results/health-cost.md.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { table } from './lib/table.mjs';

const RESULTS = fileURLToPath(new URL('./results/health-cost.md', import.meta.url));
const N = Number(process.env.BENCH_ATTEMPTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

const { attemptChannel } = await import('../dist/observability/channels.js');
const { HealthRecorder } = await import('../dist/delivery/health/health-recorder.js');
const { createLogger } = await import('../dist/observability/logger.js');

const targets = Array.from({ length: 1000 }, (_, i) => ({ id: String(i + 1), publicId: `tgt_${i}` }));
const message = { record: {}, target: targets[0], eventId: 'evt_x', targetPublicId: 'tgt_0', attempt: 1, outcome: 'delivered', status: 200, errorCode: null, failureKind: null, reason: null, durationMs: 12.5 };
const repo = { add: async () => {}, warnOnce: async () => false };
const activity = { recordForTarget: async () => {} };

/** Publishes `N` attempts as delivery-step.ts does (hasSubscribers guard included); CPU µs per attempt. */
async function round(subscribed) {
  const recorder = new HealthRecorder(repo, activity, () => null, { warnAfterMs: 86_400_000, disableAfterMs: 432_000_000 }, 3_600_000, createLogger('silent'));
  if (subscribed) recorder.start();
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    if (attemptChannel.hasSubscribers) {
      message.target = targets[i % 1000];
      message.outcome = i % 20 === 0 ? 'retry' : 'delivered';
      message.reason = i % 20 === 0 ? 'receiver answered 503' : null;
      attemptChannel.publish(message);
    }
  }
  await recorder.flush();
  const used = process.cpuUsage(before);
  if (subscribed) await recorder.stop();
  return (used.user + used.system) / N;
}

const a = [];
const b = [];
for (let r = 0; r < ROUNDS; r++) {
  // ABBA: A B B A, then B A A B, so drift falls on both alike.
  const order = r % 2 === 0 ? [true, false, false, true] : [false, true, true, false];
  for (const subscribed of order) (subscribed ? a : b).push(await round(subscribed));
}
const best = (xs) => Math.min(...xs);
const fmt = (us) => us.toFixed(3);
const rows = [
  ['A: health recorder subscribed', fmt(best(a))],
  ['B: no subscriber (baseline)', fmt(best(b))],
  ['A − B: health counting per attempt', fmt(best(a) - best(b))],
];
const report = [
  '# Target health: CPU per attempt',
  '',
  `\`node bench/health-cost.mjs\`, ${new Date().toISOString()}, Node ${process.version}: ${N.toLocaleString('en-US')} attempts per round over 1000 targets (1 in 20 failing),`,
  `${ROUNDS} ABBA rounds, the best round of each kept.`,
  '',
  table(['run', 'CPU µs per attempt'], rows),
  '',
].join('\n');
console.log(report);
await writeFile(RESULTS, report);
