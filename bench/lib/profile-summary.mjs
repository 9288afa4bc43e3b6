/**
 * `node bench/lib/profile-summary.mjs <file.cpuprofile | dir> [--top 30] [--skip S]`:
 * where a V8 CPU profile (node --cpu-prof) spent its time, by self time.
 *
 * A .cpuprofile is a call tree of nodes (function, url, line) plus a list of
 * samples (node ids) and the gaps between them. Self time of a node is the
 * sum of the gaps of the samples that landed on it; we add nodes up per
 * function (name + file + line) and per file, and print the top of each as a
 * share of all sampled time (idle and GC included, named as V8 names them),
 * and per owner: each sample charged to the nearest frame that is ours or a
 * package's (who asked for the socket write, the copy, the native call).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Self time in µs per function and per file of one parsed profile; samples in
 * the first `skipS` seconds (boot: module loading, schema compiling) left out.
 */
export function summarise(profile, skipS = 0) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const { samples, timeDeltas } = profile;
  let at = profile.startTime;
  const from = profile.startTime + skipS * 1e6;
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i] ?? 0;
    if (at < from) continue;
    // timeDeltas[i] is the gap before sample i: charge it to that sample's node.
    self.set(samples[i], (self.get(samples[i]) ?? 0) + Math.max(0, timeDeltas[i] ?? 0));
  }
  const fns = new Map();
  const files = new Map();
  const owners = new Map();
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let total = 0;
  for (const [id, us] of self) {
    const { callFrame: f } = byId.get(id);
    total += us;
    const file = fileLabel(f.url);
    const fn = `${f.functionName || '(anonymous)'} ${file}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
    files.set(file, (files.get(file) ?? 0) + us);
    const owner = ownerOf(id, byId, parent);
    owners.set(owner, (owners.get(owner) ?? 0) + us);
  }
  return { total, fns, files, owners };
}

/**
 * Who a sample's time is for: the nearest frame up the stack that is ours
 * (`dist/<folder>/`) or a package's, so a socket write or a Buffer copy counts
 * to whoever asked for it; V8's own entries (idle, GC, program) as themselves,
 * node internals with no caller of ours or a package's as `node (internals)`.
 */
function ownerOf(id, byId, parent) {
  const first = byId.get(id).callFrame;
  if (!first.url && /^\(.*\)$/.test(first.functionName)) return first.functionName;
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const url = (byId.get(at).callFrame.url ?? '').replace(/^file:\/\//, '');
    const nm = url.lastIndexOf('node_modules/');
    if (nm >= 0) {
      const rest = url.slice(nm + 'node_modules/'.length).split('/');
      return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    }
    const dist = url.lastIndexOf('/dist/');
    if (dist >= 0) {
      const parts = url.slice(dist + 1).split('/');
      return parts.length > 2 ? `ours: ${parts[1]}/` : `ours: ${parts[1]}`;
    }
  }
  return 'node (internals)';
}

/** Files of dependencies by package, our own by path under dist/, node internals as such. */
function fileLabel(url) {
  if (!url) return '(native/vm)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 'node_modules/'.length).split('/');
    const pkg = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    return `${pkg}/${rest.slice(rest[0].startsWith('@') ? 2 : 1).join('/')}`;
  }
  const dist = path.lastIndexOf('/dist/');
  if (dist >= 0) return path.slice(dist + 1);
  return path.startsWith('node:') ? path : relative(process.cwd(), path);
}

function table(title, map, total, top) {
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
  const lines = [`### ${title}`, '', '| self ms | % | where |', '|---:|---:|---|'];
  for (const [name, us] of rows) lines.push(`| ${(us / 1000).toFixed(0)} | ${((100 * us) / total).toFixed(1)} | \`${name}\` |`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' }, skip: { type: 'string' } } });
  const top = Number(values.top ?? 30);
  const skipS = Number(values.skip ?? 0);
  const target = positionals[0];
  if (!target) {
    process.stderr.write('usage: profile-summary.mjs <file.cpuprofile | dir> [--top N] [--skip seconds]\n');
    process.exit(2);
  }
  const files = statSync(target).isDirectory()
    ? readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f))
    : [target];
  for (const file of files) {
    const { total, fns, files: perFile, owners } = summarise(JSON.parse(readFileSync(file, 'utf8')), skipS);
    process.stdout.write(`## ${file}: ${(total / 1e6).toFixed(1)} s sampled\n\n`);
    process.stdout.write(`${table('by owner (nearest frame of ours or a package)', owners, total, top)}\n\n`);
    process.stdout.write(`${table('by function (self)', fns, total, top)}\n\n${table('by file (self)', perFile, total, top)}\n\n`);
  }
}
