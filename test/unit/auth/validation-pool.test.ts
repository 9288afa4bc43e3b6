import t from 'tap';
import { createHash, createHmac } from 'node:crypto';
import { InlineValidator, PoolValidator } from '../../../src/auth/validation-pool.js';
import type { CheckJob } from '../../../src/auth/crypto-checks.js';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest();
const body = Buffer.from('{"hello":"world"}');
const bodySha = sha(body).toString('hex');
const head = 'POST\n/events/t/q\n\nsig_1\n1700000000\nn-1\n';
const signature = createHmac('sha256', 'topsecret').update(head + bodySha).digest('hex');

// One job of each kind with its expected verdict; the same table runs inline and in the pool.
const CASES: Array<[string, CheckJob, string]> = [
  ['key ok', { k: 'key', secret: 'abc', hash: sha('abc') }, 'ok'],
  ['key wrong', { k: 'key', secret: 'abd', hash: sha('abc') }, 'mismatch'],
  ['signed ok', { k: 'signed', secret: 'topsecret', head, body, contentSha: bodySha, signature }, 'ok'],
  ['signed wrong secret', { k: 'signed', secret: 'other', head, body, contentSha: bodySha, signature }, 'mismatch'],
  ['signed content hash differs', { k: 'signed', secret: 'topsecret', head, body: Buffer.from('{"hello":"worle"}'), contentSha: bodySha, signature }, 'content_mismatch'],
  ['payments ok among several', { k: 'payments', secret: 'whsec', timestamp: '17', body, signatures: ['00', createHmac('sha256', 'whsec').update(Buffer.concat([Buffer.from('17.'), body])).digest('hex')] }, 'ok'],
  ['payments none match', { k: 'payments', secret: 'whsec', timestamp: '18', body, signatures: [createHmac('sha256', 'whsec').update(Buffer.concat([Buffer.from('17.'), body])).digest('hex')] }, 'mismatch'],
  // Inbound sources: raw MAC bytes, so a key and candidates cross to a thread as Uint8Arrays.
  ['source ok among several', { k: 'source', key: Buffer.from('src-key'), prefix: 'msg_1.17.', body, candidates: [Buffer.alloc(32), createHmac('sha256', 'src-key').update('msg_1.17.').update(body).digest()] }, 'ok'],
  ['source without prefix', { k: 'source', key: Buffer.from('src-key'), prefix: '', body, candidates: [createHmac('sha256', 'src-key').update(body).digest()] }, 'ok'],
  ['source wrong prefix', { k: 'source', key: Buffer.from('src-key'), prefix: 'msg_2.17.', body, candidates: [createHmac('sha256', 'src-key').update('msg_1.17.').update(body).digest()] }, 'mismatch'],
];

t.test('inline verdicts', async (t) => {
  const v = new InlineValidator();
  for (const [name, job, want] of CASES) t.equal(v.check(job), want, name);
});

t.test('pool verdicts, batched: many checks of one turn resolve each with its own verdict', async (t) => {
  const v = new PoolValidator(1, 16);
  t.teardown(() => v.close());
  // 10 rounds of the whole table in one synchronous burst: 100 checks, several batches of ≤ 16.
  const jobs = Array.from({ length: 10 }, () => CASES).flat();
  const verdicts = await Promise.all(jobs.map(([, job]) => v.check(job)));
  t.same(verdicts, jobs.map(([, , want]) => want));
});

t.test('the pool answers checks that arrive one at a time', async (t) => {
  const v = new PoolValidator(1, 64);
  t.teardown(() => v.close());
  for (const [name, job, want] of CASES) t.equal(await v.check(job), want, name);
});
