/**
 * `node bench/lib/allocation-summary.mjs <file.heapprofile> [--events N] [--top 30]`:
 * who allocated what in a sampling heap profile written by allocation-sampler.mjs
 * (garbage included): bytes by owner (the nearest frame of ours, `dist/<folder>`,
 * or of a package) and by function, as MB, MB/s and, given the events
 * handled in the sampled window, bytes per event.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { events: { type: 'string' }, top: { type: 'string', default: '30' } } });
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const seconds = profile.seconds ?? null;
const events = values.events ? Number(values.events) : null;

function ownerOf(url) {
  if (!url) return null;
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/dist\/([^/]+)/.exec(url);
  if (ours) return `ours: ${ours[1]}`;
  return null;
}

const byOwner = new Map();
const byFunction = new Map();
let total = 0;
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
// Each node's selfSize is what the samples taken in it stand for; its owner is the nearest frame of ours or a package up the stack.
const walk = (node, owner) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const here = ownerOf(url) ?? owner;
  total += node.selfSize;
  add(byOwner, here ?? (url.startsWith('node:') ? 'node internals' : '(native)'), node.selfSize);
  add(byFunction, `${functionName || '(anonymous)'} ${url.replace(/^.*\/(dist|node_modules)\//, '$1/') || '(native)'}:${lineNumber + 1}`, node.selfSize);
  for (const child of node.children) walk(child, here);
};
walk(profile.head, null);

const row = ([key, bytes]) => {
  const cells = [`${(bytes / 1_048_576).toFixed(1)} MB`, `${((100 * bytes) / total).toFixed(1)} %`];
  if (seconds) cells.push(`${(bytes / 1_048_576 / seconds).toFixed(1)} MB/s`);
  if (events) cells.push(`${Math.round(bytes / events)} B/event`);
  return `| ${cells.join(' | ')} | \`${key}\` |`;
};
const head = `| allocated | share |${seconds ? ' rate |' : ''}${events ? ' per event |' : ''} where |\n|${'---:|'.repeat(2 + (seconds ? 1 : 0) + (events ? 1 : 0))}---|`;
const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)).map(row).join('\n');
console.log(`${(total / 1_048_576).toFixed(1)} MB allocated in the sampled window${seconds ? ` (${seconds} s: ${(total / 1_048_576 / seconds).toFixed(1)} MB/s)` : ''}${events ? `, ${Math.round(total / events)} bytes per event` : ''}\n`);
console.log(`### by owner\n\n${head}\n${top(byOwner)}\n\n### by function (self)\n\n${head}\n${top(byFunction)}`);
