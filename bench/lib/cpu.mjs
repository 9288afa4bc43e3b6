import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time used by processes over a phase, as % of one core. On a 2-core box
 * this shows at a glance who was the bottleneck: a load generator at ~100 %
 * means the figure measures autocannon, not the server. Linux /proc only;
 * elsewhere the figures are simply absent.
 */
const TICKS_PER_S = 100; // USER_HZ; 100 on every mainstream Linux

/** CPU seconds (user + system, all threads) a process used so far, or null if it is gone. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the ")" of the command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/**
 * Context switches of every thread of a process so far (voluntary: a thread
 * went to wait, e.g. an event loop with nothing to do; involuntary: the
 * kernel took the core away), or null if it is gone. Per event, they say how
 * often the process woke up to do its work: fewer events per wake-up is more
 * fixed cost (epoll, timers, microtask checkpoints) per event.
 */
export function contextSwitches(pid) {
  try {
    let voluntary = 0;
    let involuntary = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
        voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
        involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      } catch {
        // a thread that ended meanwhile
      }
    }
    return { voluntary, involuntary };
  } catch {
    return null;
  }
}

/** Peak resident set size of a process so far (VmHWM), in MB, or null if it is gone. */
export function peakRssMb(pid) {
  try {
    const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
    return Math.round(kb / 1024);
  } catch {
    return null;
  }
}

/** Whole-machine CPU seconds from /proc/stat: { busy, iowait } summed over all cores. */
function machineSeconds() {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = ticks.map(Number);
    return { busy: (user + nice + system + irq + softirq + steal) / TICKS_PER_S, iowait: iowait / TICKS_PER_S };
  } catch {
    return null;
  }
}

/**
 * `pids`: { label: pid }. Returns stop() -> { label: percent of one core },
 * plus `others`: what every process NOT listed used meanwhile (other
 * engineers' test runs on a shared box: the noise), and `iowait` (cores idle
 * waiting for the disk), both in % of one core too.
 */
export function startCpuMeter(pids) {
  const t0 = performance.now();
  const before = Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, cpuSeconds(pid)]));
  const machine0 = machineSeconds();
  return () => {
    const wallS = (performance.now() - t0) / 1000;
    const out = {};
    let ours = 0;
    for (const [label, pid] of Object.entries(pids)) {
      const end = cpuSeconds(pid);
      out[label] = end === null || before[label] === null ? null : Math.round(((end - before[label]) / wallS) * 100);
      if (out[label] !== null) ours += end - before[label];
    }
    const machine1 = machineSeconds();
    if (machine0 && machine1) {
      out.others = Math.max(0, Math.round(((machine1.busy - machine0.busy - ours) / wallS) * 100));
      out.iowait = Math.round(((machine1.iowait - machine0.iowait) / wallS) * 100);
    }
    return out;
  };
}

/** Pid of the first process whose command line contains `needle` (e.g. the Kafka broker), or null. */
export function findPid(needle) {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) return Number(entry);
      } catch {
        // process went away while we looked
      }
    }
  } catch {
    // no /proc
  }
  return null;
}

/** CPU seconds of every thread of `pid`: Map tid -> { comm, seconds }. */
function threadSeconds(pid) {
  const out = new Map();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(tid, { comm, seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S });
      } catch {
        // thread ended while we looked
      }
    }
  } catch {
    // no /proc
  }
  return out;
}

/**
 * Per-thread CPU of one process over a phase, to tell which thread a cost is
 * on (e.g. a validation pool's workers against the main thread). Returns stop()
 * -> { main, '<comm>': ... } in % of one core: the main thread (tid = pid)
 * apart, the others summed by thread name (worker threads are all "node";
 * V8 and libuv helpers have their own names).
 */
export function startThreadMeter(pid) {
  const t0 = performance.now();
  const before = threadSeconds(pid);
  return () => {
    const wallS = (performance.now() - t0) / 1000;
    const out = {};
    for (const [tid, { comm, seconds }] of threadSeconds(pid)) {
      const label = tid === String(pid) ? 'main' : comm;
      out[label] = (out[label] ?? 0) + seconds - (before.get(tid)?.seconds ?? 0);
    }
    for (const label of Object.keys(out)) out[label] = Math.round((out[label] / wallS) * 100);
    return out;
  };
}
