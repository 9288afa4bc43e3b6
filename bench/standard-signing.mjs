// CPU per Standard Webhooks signature: a v1 entry (HMAC-SHA256, one per HMAC
// key) against a v1a entry (ed25519, one per ed25519 key), over a 1 KiB body,
// through the compiled standardHeaders (dist/) that deliveries call, so the
// figure includes what the entry costs beside the signature itself. Both are
// measured in the same run, alternated round by round; the figure is the
// median over rounds of process CPU µs (process.cpuUsage) per signature and
// the ratio. Writes bench/results/standard-signing.md.
//
//   npm run build && node bench/standard-signing.mjs [rounds=9] [perRound=20000]
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { standardHeaders } from '../dist/delivery/signing/signing.js';

const rounds = Number(process.argv[2] ?? 9);
const perRound = Number(process.argv[3] ?? 20_000);
const body = randomBytes(1024);
const hmacKey = { keyId: 'sig_hmac', secret: `whsec_${randomBytes(32).toString('base64url')}` };
const edKey = { algorithm: 'ed25519', keyId: 'sig_ed', privateKey: generateKeyPairSync('ed25519').privateKey };
const variants = { 'v1 (HMAC-SHA256)': [hmacKey], 'v1a (ed25519)': [edKey] };

/** CPU µs per call of standardHeaders with `keys` (one signature each). */
function measure(keys, n) {
  const before = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < n; i++) sink += standardHeaders(keys, { eventId: `evt_${i}`, body }, 1_700_000_000_000 + i)['webhook-signature'].length;
  const used = process.cpuUsage(before);
  if (sink === 0) throw new Error('unreachable');
  return (used.user + used.system) / n;
}

for (const keys of Object.values(variants)) measure(keys, 2_000); // warm-up
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? Object.keys(variants) : Object.keys(variants).reverse();
  for (const name of order) samples[name].push(measure(variants[name], perRound));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const [hmacName, edName] = Object.keys(variants);
const hmac = median(samples[hmacName]);
const ed = median(samples[edName]);
const lines = [
  '# Standard Webhooks signing: CPU per signature',
  '',
  `\`node bench/standard-signing.mjs ${rounds} ${perRound}\` — Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} (${os.cpus().length} cores, shared), ${new Date().toISOString().slice(0, 10)}.`,
  `1 KiB body, one key per variant, ${rounds} alternated rounds of ${perRound} signatures; median CPU µs per signature (the whole standardHeaders call).`,
  '',
  '| entry | CPU µs / signature | rounds (µs) |',
  '|---|---:|---|',
  `| ${hmacName} | ${hmac.toFixed(2)} | ${samples[hmacName].map((x) => x.toFixed(2)).join(', ')} |`,
  `| ${edName} | ${ed.toFixed(2)} | ${samples[edName].map((x) => x.toFixed(2)).join(', ')} |`,
  '',
  `ed25519 / HMAC: **${(ed / hmac).toFixed(1)}×**. Each active key adds one entry per attempt: a standard delivery with one HMAC and one ed25519 key costs about ${(hmac + ed).toFixed(1)} µs of signing.`,
  '',
];
writeFileSync(fileURLToPath(new URL('./results/standard-signing.md', import.meta.url)), lines.join('\n'));
console.log(lines.join('\n'));
