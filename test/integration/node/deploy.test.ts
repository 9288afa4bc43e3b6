import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['management'] });
const api = clientFor(node.port, creds);
const dir = mkdtempSync(join(tmpdir(), 'sg-deploy-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const env = {
  ...process.env,
  STREAMGATE_URL: `http://127.0.0.1:${node.port}`,
  STREAMGATE_LICENSE: creds.licensePublicId,
  STREAMGATE_API_KEY: creds.buildKey,
  STREAMGATE_TENANT: creds.tenantPublicId,
};

async function deploy(yaml: string): Promise<{ code: number; out: string; err: string }> {
  const file = join(dir, `deploy-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, yaml);
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'deploy', file], { env });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout, err: err.stderr };
  }
}

const DOC = `
queues:
  orders: { groupKeyRequired: true, hopBudget: 5 }
  audit: {}
targets:
  warehouse:
    url: http://127.0.0.1:9/hook
    staticHeaders: { X-Team: logistics }
routes:
  - { queue: orders, target: warehouse }
signingKeys: { minimum: 1 }
streams:
  - { name: shipments, description: Shipment events, eventTypes: [shipment.sent], payloadSchema: '{}', isPublic: true }
`;

t.test('a deploy file converges: the second run changes nothing', async (t) => {
  const first = await deploy(DOC);
  t.equal(first.code, 0, first.err);
  t.match(first.out, /created\s+queues\.orders/);
  t.match(first.out, /created\s+targets\.warehouse/);
  t.match(first.out, /created\s+routes\.orders->warehouse/);
  t.match(first.out, /created\s+signingKeys\.sig_\S+\s+secret whsec_\S+ \(shown once\)/);
  t.match(first.out, /(created|changed)\s+streams\.shipments/);
  t.match(first.out, /0 failed/);

  const second = await deploy(DOC);
  t.equal(second.code, 0);
  t.match(second.out, /0 created, 0 changed, 6 unchanged, 0 failed/);
  const keys = await api.manage('GET', api.tenantPath('/signing-keys'));
  t.equal(keys.body.data.length, 1, 'one signing key, not one per run');
  const catalog = await api.manage('GET', `/waas/producer/${creds.tenantPublicId}/catalog`);
  t.ok(catalog.body.data.some((s: { key: string }) => s.key === 'shipments'), 'the stream is in the catalog');

  const changed = await deploy(DOC.replace('hopBudget: 5', 'hopBudget: 6'));
  t.match(changed.out, /changed\s+queues\.orders/);
  t.match(changed.out, /0 created, 1 changed, 5 unchanged/);
  const queue = await api.manage('GET', api.tenantPath('/queues/orders'));
  t.equal(queue.body.hopBudget, 6, 'the API reflects the file');
});

t.test('errors name the object and the field', async (t) => {
  const bad = await deploy(`
queues:
  broken: { hopBudget: lots }
targets:
  nowhere: { url: ftp://example.com }
`);
  // What the CLI said on stderr goes with a failure: a crash and a refusal both exit 1.
  t.equal(bad.code, 1, `stderr: ${bad.err}`);
  t.match(bad.out, /failed\s+queues\.broken\s+queues\.broken\.hopBudget: must be an integer/, `stderr: ${bad.err}`);
  t.match(bad.out, /failed\s+targets\.nowhere\s+targets\.nowhere\.url:/, `stderr: ${bad.err}`);
  const malformed = await deploy('queues: [1, 2]\nbogus: true\n');
  t.equal(malformed.code, 2);
  t.match(malformed.err, /queues: must be a mapping/);
  t.match(malformed.err, /bogus: unknown section/);
});

t.test("the README's example deploy file applies and converges", async (t) => {
  const example = fileURLToPath(new URL('../../../config/deploy.example.yaml', import.meta.url));
  const { readFileSync } = await import('node:fs');
  const text = readFileSync(example, 'utf8');
  const first = await deploy(text);
  t.equal(first.code, 0, first.out + first.err);
  t.match(first.out, /0 failed/);
  const second = await deploy(text);
  t.match(second.out, /0 created, 0 changed, \d+ unchanged, 0 failed/);
});

t.test('issue 25 settings: standard signing, a GitHub source, ed25519 keys (public key shown, never a private one)', async (t) => {
  const { randomBytes } = await import('node:crypto');
  const withKek = await startTestNode(t, backends, { roles: ['management'], signing: { keyEncryptionKey: randomBytes(32).toString('hex') } });
  const doc = `
queues:
  hooks: { outboundSigning: standard, authMode: github, sourceSecret: "\${GH_SECRET}" }
signingKeys: { minimum: 1, ed25519: 1 }
`;
  const kekEnv = { ...env, STREAMGATE_URL: `http://127.0.0.1:${withKek.port}`, GH_SECRET: 'a-github-webhook-secret' };
  const file = join(dir, 'standard.yaml');
  writeFileSync(file, doc);
  const first = await run(process.execPath, [CLI, 'deploy', file], { env: kekEnv });
  t.match(first.stdout, /created\s+queues\.hooks/);
  t.match(first.stdout, /created\s+signingKeys\.sig_\S+\s+public key whpk_[A-Za-z0-9+/]{43}=/, 'the ed25519 key is made, its public key shown');
  t.notOk(/created\s+signingKeys\.\S+\s+secret/.test(first.stdout), 'no HMAC key made: the first test left one');
  t.notOk(first.stdout.includes('a-github-webhook-secret'), 'the source secret is not echoed');
  t.match(first.stdout, /0 failed/);
  const again = await run(process.execPath, [CLI, 'deploy', file], { env: kekEnv });
  t.match(again.stdout, /0 created, 0 changed, 2 unchanged, 0 failed/, 'converged');
  const queue = await api.manage('GET', api.tenantPath('/queues/hooks'));
  t.equal(queue.body.outboundSigning, 'standard');
  t.equal(queue.body.authMode, 'github');
  const keys = await api.manage('GET', api.tenantPath('/signing-keys'));
  t.same(keys.body.data.map((k: { algorithm: string }) => k.algorithm).sort(), ['ed25519', 'hmac-sha256']);

  // A node without signing.keyEncryptionKey cannot make one: the file's line says why.
  writeFileSync(file, 'signingKeys: { ed25519: 2 }\n');
  const refused = await deploy('signingKeys: { ed25519: 2 }\n');
  t.equal(refused.code, 1);
  t.match(refused.out, /failed\s+signingKeys\s+.*keyEncryptionKey/);
  const bad = await deploy('signingKeys: { ed25519: -1, rsa: 1 }\n');
  t.equal(bad.code, 2);
  t.match(bad.err, /signingKeys\.ed25519: must be a whole number/);
  t.match(bad.err, /signingKeys\.rsa: unknown setting/);
});
