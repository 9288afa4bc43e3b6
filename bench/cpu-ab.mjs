/**
 * `node bench/cpu-ab.mjs --a <dist dir> --b <dist dir> [--c <dist dir>] [--rounds 3] [--threads 1,2]`:
 * streamgate CPU µs per delivered event of two or three builds, in ONE run,
 * alternated (each round another build goes first) so that whatever else the shared box does falls on both alike. Each
 * measurement is the end-to-end phase of `npm run bench` (every role in one
 * process, autocannon → streamgate → Kafka → streamgate → receiver, a fresh
 * topic each time), CPU from /proc/<pid>/stat of the streamgate process.
 * `--threads` takes a list: every round measures each build at each count.
 *
 * `--a-node` / `--b-node` / `--c-node <node binary>`: the Node that runs that
 * build (default: the one running the bench), e.g. an older build that needs
 * Node 20: `--a /work/bench-old/dist --a-node /usr/bin/node`.
 *
 * To keep a build aside before changing src/: `bash bench/keep-build.sh /tmp/ab/before`
 * (dist/ copied, with package.json and a node_modules link, so it runs as is).
 * Other settings as for `npm run bench` (BENCH_DURATION, BENCH_KEYS, ...).
 * Results: console, appended to bench/results/cpu-ab.md.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, mkdtemp } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readOptions } from './lib/options.mjs';
import { runWithCleanup } from './lib/cleanup.mjs';
import { stopChild } from './lib/children.mjs';
import { prepareBench } from './lib/bench-context.mjs';
import { endToEndPhase } from './phases/end-to-end.mjs';
import { say } from './lib/say.mjs';

const RESULTS = fileURLToPath(new URL('./results/cpu-ab.md', import.meta.url));

async function main() {
  const { values } = parseArgs({
    options: Object.fromEntries(['a', 'b', 'c', 'a-node', 'b-node', 'c-node', 'rounds', 'note', 'threads'].map((name) => [name, { type: 'string' }])),
  });
  // A is the reference; B (and C, optional) are compared with it.
  const builds = Object.fromEntries([['A', values.a], ['B', values.b], ['C', values.c]].filter(([name, dir]) => name !== 'C' || dir));
  for (const [name, dir] of Object.entries(builds)) {
    if (!dir || !existsSync(join(dir, 'cli.js'))) throw new Error(`--${name.toLowerCase()} must be a dist/ directory holding cli.js (got ${JSON.stringify(dir)})`);
  }
  const names = Object.keys(builds);
  const nodes = Object.fromEntries(names.map((n) => [n, values[`${n.toLowerCase()}-node`] ?? process.execPath]));
  const versions = Object.fromEntries(names.map((n) => [n, execFileSync(nodes[n], ['--version'], { encoding: 'utf8' }).trim()]));
  const others = names.slice(1);
  const rounds = Number(values.rounds ?? 3);
  const threadCounts = (values.threads ?? '1').split(',').map(Number);
  if (threadCounts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--threads: a comma-separated list of integers >= 1 (got ${values.threads})`);
  const options = readOptions([], process.env);
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-cpu-ab-'));
  const loadAtStart = loadavg().map((l) => l.toFixed(1)).join(' / ');
  say(`cpu A/B ${runId}: ${names.map((n) => `${n}=${builds[n]} (node ${versions[n]})`).join(' ')}, ${rounds} rounds, ${options.duration} s load each, --threads ${threadCounts.join(',')}; load ${loadAtStart}; logs in ${workDir}`);
  const ctx = await prepareBench({ runId, workDir, options });
  const rows = Object.fromEntries(threadCounts.map((t) => [t, []]));
  // A phase that fails ends the run, but the rounds completed before it are still written.
  let failure = null;
  try {
    for (let round = 1; round <= rounds; round++) {
      // Each round another build goes first, so the order's effect falls on every build alike.
      const order = names.map((_, i) => names[(i + round - 1) % names.length]);
      for (const threads of threadCounts) {
        const row = { round };
        for (const name of order) {
          const r = await endToEndPhase({ ...ctx, cli: resolve(builds[name], 'cli.js'), node: nodes[name], labelSuffix: `${name.toLowerCase()}${round}` }, threads);
          if (r.skipped || !r.delivery?.complete) throw new Error(`${name} round ${round}: ${r.skipped ?? `only ${r.delivery?.unique}/${r.delivery?.expected} delivered`}`);
          row[name] = { us: r.node.cpuUsPerEvent, perS: r.delivery.perS, accepted: r.load.acceptedPerS, cpuPct: r.node.cpuPct, perFetch: r.node.recordsPerFetch };
        }
        for (const name of others) row[`ratio${name}`] = row[name].us / row.A.us;
        say(`round ${round}, threads ${threads}: ${names.map((n) => `${n} ${row[n].us.toFixed(1)} µs/event`).join(', ')}; ${others.map((n) => `${n}/A ${(row[`ratio${n}`] * 100).toFixed(1)} %`).join(', ')}`);
        rows[threads].push(row);
      }
    }
  } catch (err) {
    failure = err;
    say(`stopped: ${err.message}; writing the rounds completed so far`);
  }
  await stopChild(ctx.receiver.child);
  const middle = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const text = [
    `## ${new Date().toISOString()}${values.note ? `: ${values.note}` : ''}`,
    '',
    `- ${names.map((n) => `${n} = \`${builds[n]}\` on node ${versions[n]}`).join(', ')}; ${rounds} rounds (each round another build first), ${options.duration} s of load each (+${options.warmup} s warm-up), ${options.connections} connections, ${options.keys} keys, ${options.bodyBytes} B; --threads ${threadCounts.join(' and ')}; ${cpus().length} CPUs; load average at the start ${loadAtStart}, at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')}`,
    '',
    ...(failure ? [`**Run stopped early: ${failure.message.split('\n')[0]}** (only the rounds completed before are below)`, ''] : []),
    ...threadCounts.filter((threads) => rows[threads].length > 0).flatMap((threads) => {
      const rs = rows[threads];
      const med = (name, key) => middle(rs.map((r) => r[name][key]));
      return [
        ...(threadCounts.length > 1 ? [`### --threads ${threads}`, ''] : []),
        `| round | ${names.map((n) => `${n} µs/event`).join(' | ')} | ${others.map((n) => `${n} / A`).join(' | ')} | ${names.map((n) => `${n} delivered ev/s`).join(' | ')} | ${names.map((n) => `${n} CPU %`).join(' | ')} | ${names.map((n) => `${n} records / fetch`).join(' | ')} |`,
        `|${'---:|'.repeat(1 + names.length * 4 + others.length)}`,
        ...rs.map((r) => `| ${r.round} | ${names.map((n) => r[n].us.toFixed(1)).join(' | ')} | ${others.map((n) => `${(r[`ratio${n}`] * 100).toFixed(1)} %`).join(' | ')} | ${names.map((n) => Math.round(r[n].perS)).join(' | ')} | ${names.map((n) => r[n].cpuPct).join(' | ')} | ${names.map((n) => r[n].perFetch?.toFixed(1) ?? '–').join(' | ')} |`),
        '',
        `**median per round ${others.map((n) => `${n} / A: ${(middle(rs.map((r) => r[`ratio${n}`])) * 100).toFixed(1)} %`).join(', ')}** (medians: ${names.map((n) => `${n} ${med(n, 'us').toFixed(1)} µs/event, ${Math.round(med(n, 'perS'))} delivered ev/s`).join('; ')}; delivered ev/s ${others.map((n) => `${n} / A: ${(middle(rs.map((r) => r[n].perS / r.A.perS)) * 100).toFixed(1)} %`).join(', ')})`,
        '',
      ];
    }),
  ].join('\n');
  process.stdout.write(`\n${text}\n`);
  await appendFile(RESULTS, `${text}\n`);
  if (failure) throw failure;
}

runWithCleanup(main);
