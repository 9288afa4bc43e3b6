import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Admin } from '@platformatic/kafka';

const INFRA = fileURLToPath(new URL('../../config/infra/', import.meta.url));
/** The shared broker's listener ports (config/infra/lib.sh defaults): never ours to kill. */
const SHARED_PORTS = new Set([9092, 9093, 9094]);

/**
 * A Kafka broker of the bench's own, started and restarted with
 * config/infra/up.sh under moved ports and a private run dir (its config,
 * data, logs and pid file), so it can be SIGKILLed without touching the
 * broker everyone else's tests use on 9092. Every kill finds the java
 * process by that run dir, never by a broad name.
 */
export function privateBroker({ runDir, port, sslPort = port + 1, controllerPort = port + 2, heap = '512m' }) {
  for (const p of [port, sslPort, controllerPort]) {
    if (SHARED_PORTS.has(p)) throw new Error(`port ${p} belongs to the shared broker: pick other BENCH_KAFKA_PORT`);
  }
  const env = {
    ...process.env,
    STREAMGATE_KAFKA_PORT: String(port),
    STREAMGATE_KAFKA_SSL_PORT: String(sslPort),
    STREAMGATE_KAFKA_CONTROLLER_PORT: String(controllerPort),
    STREAMGATE_KAFKA_RUN_DIR: runDir,
    STREAMGATE_KAFKA_HEAP: heap,
    STREAMGATE_INSTALL_KCAT: '0',
  };
  const props = join(runDir, 'server.properties');
  const bootstrap = `127.0.0.1:${port}`;
  // The up.sh run under way, if any: cleanup must stop it before it starts a broker nobody would stop.
  let starting = null;

  /** Pid of the java process running with our server.properties, or null. */
  function pid() {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        if (cmd.includes('kafka.Kafka') && cmd.includes(props)) return Number(entry);
      } catch {
        // gone meanwhile
      }
    }
    return null;
  }

  /** Runs up.sh (format on the first start, then start and wait until it answers). Resolves with its duration. */
  async function start() {
    const started = performance.now();
    // Its own process group, so that cleanup can kill up.sh together with the subshell that launches java.
    const child = spawn('bash', [join(INFRA, 'up.sh')], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    starting = child;
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const [code] = await once(child, 'exit');
    starting = null;
    if (code !== 0) throw new Error(`config/infra/up.sh (private broker ${bootstrap}) exited ${code}:\n${out.trim().split('\n').slice(-20).join('\n')}`);
    if (!out.includes(`Kafka is ready on ${bootstrap}`)) {
      // up.sh "uses" whatever already answers on the port: that must not be someone else's broker.
      throw new Error(`up.sh did not start a broker of ours on ${bootstrap}:\n${out.trim()}`);
    }
    return Math.round(performance.now() - started);
  }

  /** SIGKILL, as a crash or an OOM kill would: no clean shutdown, no leader handover. Resolves once it is gone. */
  async function kill() {
    const target = pid();
    if (target === null) throw new Error(`no broker process holds ${props}`);
    process.kill(target, 'SIGKILL');
    const killedAt = performance.timeOrigin + performance.now();
    while (pid() === target) await new Promise((r) => setTimeout(r, 20));
    return killedAt;
  }

  /**
   * Metadata requests with a fresh client and no retries: `answers` when the
   * broker answered at all, `leaders` when every partition of `topic` has a leader.
   */
  async function probe(topic) {
    const admin = new Admin({ clientId: 'recovery-probe', bootstrapBrokers: [bootstrap], retries: 0, connectTimeout: 500, timeout: 1_000, requestTimeout: 1_000, autocreateTopics: false });
    try {
      await admin.metadata({ topics: [], forceUpdate: true });
    } catch {
      await admin.close().catch(() => {});
      return { answers: false, leaders: false };
    }
    try {
      if (!topic) return { answers: true, leaders: false };
      const meta = await admin.metadata({ topics: [topic], forceUpdate: true });
      const parts = meta.topics.get(topic)?.partitions ?? [];
      return { answers: true, leaders: parts.length > 0 && parts.every((p) => p.leader >= 0) };
    } catch {
      // answered, but not (yet) with a leader for every partition
      return { answers: true, leaders: false };
    } finally {
      await admin.close().catch(() => {});
    }
  }

  /** Kills whatever broker still runs with our config and deletes the run dir. */
  async function destroy() {
    if (starting && starting.exitCode === null && starting.signalCode === null) {
      const exited = once(starting, 'exit');
      try {
        process.kill(-starting.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    }
    // Twice, a moment apart: a java exec'd by the up.sh just killed may appear only now.
    for (let round = 0; round < 2; round++) {
      const target = pid();
      if (target !== null) process.kill(target, 'SIGKILL');
      while (target !== null && pid() === target) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300));
    }
    await rm(runDir, { recursive: true, force: true });
  }

  return { bootstrap, runDir, serverLog: join(runDir, 'logs', 'server.log'), pid, start, kill, probe, destroy };
}
