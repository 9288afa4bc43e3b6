import t, { type Test } from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import type { ApiResponse } from '../../helpers/api-client.js';
import { countRecords, readRecords } from '../../helpers/topic.js';
import { signRequest } from '../../helpers/signing.js';
import { rawPost, rawRequest } from '../../helpers/raw-http.js';
import { connectDatabase } from '../../../src/storage/db.js';
import { LicenseRepo } from '../../../src/storage/license-repo.js';
import { TopologyRepo } from '../../../src/storage/topology-repo.js';

/**
 * Every error code of docs/api.md#errors (and the "clear codes" of bad input),
 * reached through HTTP as a sender would, with its status, its code and the
 * proof that nothing was written: the topic's record count does not move, and
 * at the end no record in the topic carries the marker of a refused request.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['ingress', 'management'], server: { port: 0, host: '127.0.0.1', maxBodyBytes: 4096 } });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;

async function queue(name: string, settings: object): Promise<void> {
  const res = await api.manage('PUT', api.tenantPath(`/queues/${name}`), settings);
  if (res.status >= 300) throw new Error(`queue ${name}: ${res.status} ${JSON.stringify(res.body)}`);
}
await queue('open', {});
await queue('grouped', { groupKeyRequired: true });
await queue('mapped', { mappedHeaders: [{ from: { source: 'header', name: 'X-Customer' }, as: 'X-Customer-Id', required: true }] });
await queue('mapped-body', { mappedHeaders: [{ from: { source: 'body', name: 'note' }, as: 'X-Note' }] });
await queue('body-context', { groupKey: { source: 'body', name: 'customer' } });
await queue('closed', { ingress: 'closed' });
await queue('archived', { archived: true });
await queue('signed', { authMode: 'signed_request' });
await queue('payments-no-secret', { authMode: 'payments' });
await queue('allowlisted', { ipAllowlist: ['10.0.0.0/8', '2001:db8::/32'] });
await queue('short-chain', { hopBudget: 2 });

const scoped = await api.manage('POST', api.tenantPath('/keys'), { profile: 'ingress', queueScopes: ['open'] });
// A second workspace of the same license, with its own key; and an archived one.
const sql = connectDatabase(backends.databaseUrl, 1);
const licenses = new LicenseRepo(sql);
const [license] = await sql<{ id: string }[]>`SELECT id FROM licenses WHERE public_id = ${creds.licensePublicId}`;
const other = await licenses.createWorkspace(license!.id, 'other');
const otherKey = await licenses.createKey({ licenseId: license!.id, workspaceId: other.id, profile: 'ingress' });
const archivedWs = await licenses.createWorkspace(license!.id, 'archived');
await sql`UPDATE workspaces SET archived = true WHERE id = ${archivedWs.id}`;
await new TopologyRepo(sql).upsertQueue(archivedWs.id, 'inbox', {});
const archivedKey = await licenses.createKey({ licenseId: license!.id, workspaceId: archivedWs.id, profile: 'ingress' });
await sql.end();

let n = 0;
const refusedMarkers: string[] = [];
const acceptedMarkers: string[] = [];
/** A JSON body carrying a unique marker, so the final topic scan can tell refused requests apart. */
const marked = (kind: 'refused' | 'accepted', extra: object = {}) => {
  const marker = `${kind}-${++n}`;
  (kind === 'refused' ? refusedMarkers : acceptedMarkers).push(marker);
  return JSON.stringify({ marker, ...extra });
};

async function refused(t: Test, send: () => Promise<Pick<ApiResponse<any>, 'status' | 'body'>>, status: number, code: string): Promise<void> {
  const before = await countRecords(backends);
  const res = await send();
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.error?.code, code, `code ${code}`);
  t.type(res.body?.error?.message, 'string', 'a message for humans');
  t.equal(await countRecords(backends), before, 'nothing written to the topic');
}

const post = (queueName: string, body: string, headers: Record<string, string> = {}, query = '') =>
  api.request('POST', `/events/${tenant}/${queueName}${query}`, {
    raw: body,
    headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json', ...headers },
  });

t.test('202: an accepted event answers its id and is in the topic', async (t) => {
  const before = await countRecords(backends);
  const res = await post('open', marked('accepted'));
  t.equal(res.status, 202);
  t.match(res.body, { eventId: /^evt_/ });
  t.notOk('replayed' in res.body, 'no replayed flag on a first acceptance');
  t.equal(await countRecords(backends), before + 1);
});

t.test('400 context_group_key_required', (t) => refused(t, () => post('grouped', marked('refused')), 400, 'context_group_key_required'));

t.test('400 context_*_invalid: control characters in each context value', async (t) => {
  await refused(t, () => post('open', marked('refused'), { 'x-service-group-key': 'a\tb' }), 400, 'context_group_key_invalid');
  await refused(t, () => post('open', marked('refused'), { 'x-service-partition-key': 'a\tb' }), 400, 'context_partition_key_invalid');
  await refused(t, () => post('open', marked('refused'), { 'x-service-event-type': 'order\t.created' }), 400, 'context_event_type_key_invalid');
});

t.test('400 context_*_too_long: 256 bytes against the 255-byte limit', async (t) => {
  const long = 'k'.repeat(256);
  await refused(t, () => post('open', marked('refused'), { 'x-service-group-key': long }), 400, 'context_group_key_too_long');
  await refused(t, () => post('open', marked('refused'), { 'x-service-partition-key': long }), 400, 'context_partition_key_too_long');
  await refused(t, () => post('open', marked('refused'), { 'x-service-event-type': long }), 400, 'context_event_type_key_too_long');
});

t.test('400 outbound_header_required: a required mapped header finds nothing', (t) =>
  refused(t, () => post('mapped', marked('refused')), 400, 'outbound_header_required'));

t.test('400 outbound_header_invalid: a mapped value no header can carry', (t) =>
  refused(t, () => post('mapped-body', marked('refused', { note: 'line one\nline two' })), 400, 'outbound_header_invalid'));

t.test('400 sandbox_query_not_allowed: each sandbox parameter on the production route', async (t) => {
  for (const query of ['?sb_fail_code=500', '?sb_fail_count=2', '?runId=run-1', '?x=1&sb%5Ffail_code=503']) {
    await refused(t, () => post('open', marked('refused'), {}, query), 400, 'sandbox_query_not_allowed');
  }
});

t.test('400 invalid_body: a non-JSON body on a queue that reads body fields', async (t) => {
  await refused(t, () => post('body-context', 'customer=acme'), 400, 'invalid_body');
  await refused(t, () => post('body-context', '["customer"]'), 400, 'invalid_body');
});

t.test('400 invalid_header: a header value that is not UTF-8', async (t) => {
  const body = Buffer.from(marked('refused'));
  await refused(
    t,
    async () => {
      const res = await rawRequest(node.port, rawPost(`/events/${tenant}/open`, [['x-api-key', creds.ingressKey], ['x-trace', Buffer.from([0x61, 0xff, 0xfe, 0x62])]], body));
      return { status: res.status ?? 0, body: JSON.parse(res.body || 'null') };
    },
    400,
    'invalid_header',
  );
});

/** A raw request with one header whose value is the given bytes (what fetch refuses to send). */
async function rawWith(queueName: string, header: string, value: Buffer, extra: Array<[string, string]> = [], body = marked('refused')) {
  const res = await rawRequest(node.port, rawPost(`/events/${tenant}/${queueName}`, [['x-api-key', creds.ingressKey], ...extra, [header, value]], Buffer.from(body)), 5_000);
  return { status: res.status ?? 0, body: JSON.parse(res.body || 'null'), raw: res.raw };
}
const b = (...parts: Array<string | number>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from([p]))));

t.test('header bytes a lenient parser would drop: CR, NUL and controls get the reference codes', async (t) => {
  for (const bad of [0x0d, 0x00, 0x01, 0x1b]) {
    await refused(t, () => rawWith('open', 'x-service-event-type', b('order', bad, 'created')), 400, 'context_event_type_key_invalid');
    await refused(t, () => rawWith('open', 'x-service-group-key', b('g', bad)), 400, 'context_group_key_invalid');
    await refused(t, () => rawWith('open', 'x-service-partition-key', b(bad, 'p')), 400, 'context_partition_key_invalid');
    await refused(t, () => rawWith('open', 'x-trace', b('a', bad, 'b')), 400, 'invalid_header');
  }
  await refused(t, () => rawRequest(node.port, rawPost(`/events/${tenant}/open`, [['x-api-key', b(creds.ingressKey, 0x0d)]], Buffer.from(marked('refused'))), 5_000)
    .then((r) => ({ status: r.status ?? 0, body: JSON.parse(r.body || 'null') })), 401, 'invalid_api_key');
});

t.test('header bytes: a bare LF, obs-fold or a nameless line is 400 invalid_header and the connection closes', async (t) => {
  const net = await import('node:net');
  for (const [label, value] of [['LF inside a value', 'a\nb'], ['obs-fold', 'a\r\n folded'], ['line without a colon', 'a\r\nnocolon']] as const) {
    const before = await countRecords(backends);
    // Keep-alive (no Connection: close), and a second request behind the first: only the refusal comes back.
    const body = marked('refused');
    const request = `POST /events/${tenant}/open HTTP/1.1\r\nhost: x\r\nx-api-key: ${creds.ingressKey}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-trace: ${value}\r\n\r\n${body}`;
    let gaveUp = false;
    const raw = await new Promise<string>((resolve) => {
      const socket = net.connect(node.port, '127.0.0.1', () => socket.write(request));
      let out = '';
      socket.on('data', (d) => (out += d.toString('latin1')));
      socket.on('close', () => resolve(out));
      setTimeout(() => {
        gaveUp = true;
        socket.destroy();
      }, 5_000);
    });
    t.notOk(gaveUp, `${label}: the server closed the connection`);
    t.match(raw, /^HTTP\/1\.1 400 /, label);
    t.match(raw, /"code":"invalid_header"/, label);
    t.equal(raw.match(/HTTP\/1\.1/g)?.length, 1, `${label}: one answer, then the server closed the connection`);
    t.equal(await countRecords(backends), before, 'nothing written');
  }
});

t.test('header bytes: invalid UTF-8 at either end of a value is refused, valid UTF-8 there arrives whole', async (t) => {
  await refused(t, () => rawWith('open', 'x-service-event-type', b('order', 0xff)), 400, 'invalid_header');
  await refused(t, () => rawWith('open', 'x-trace', b(0xc3, 'x')), 400, 'invalid_header');
  const body = marked('accepted');
  const res = await rawWith('open', 'x-service-event-type', Buffer.from('commande.créée'), [['x-service-group-key', 'café']], body);
  t.equal(res.status, 202);
  const record = (await readRecords(backends)).find((r) => r.body.toString() === body);
  t.equal(record?.eventType, 'commande.créée', 'a trailing non-ASCII character is kept');
  t.equal(record?.groupKey, 'café');
});

t.test('keep-alive through the header guard: a chunked body, then a Content-Length body, then a bad head, on one connection', async (t) => {
  const net = await import('node:net');
  const before = await countRecords(backends);
  const one = marked('accepted');
  const two = marked('accepted');
  const head = (extra: string) => `POST /events/${tenant}/open HTTP/1.1\r\nhost: x\r\nx-api-key: ${creds.ingressKey}\r\ncontent-type: application/json\r\n${extra}\r\n`;
  const chunked = `${head('transfer-encoding: chunked\r\n')}${one.length.toString(16)}\r\n${one}\r\n0\r\n\r\n`;
  const plain = `${head(`content-length: ${Buffer.byteLength(two)}\r\n`)}${two}`;
  const bad = Buffer.concat([Buffer.from(head('content-length: 2\r\n').slice(0, -2)), Buffer.from('x-service-event-type: a'), Buffer.from([0x01]), Buffer.from('\r\n\r\n{}')]);
  const answers: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect(node.port, '127.0.0.1');
    let buffered = '';
    const steps = [Buffer.from(chunked), Buffer.from(plain), bad];
    socket.on('connect', () => socket.write(steps.shift()!));
    socket.on('data', (d) => {
      buffered += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})[^]*?\r\ncontent-length: (\d+)(?:\r\n[^\r][^]*?)?\r\n\r\n/i.exec(buffered);
      if (!m || buffered.length < m[0].length + Number(m[2])) return;
      answers.push(`${m[1]} ${buffered.slice(m[0].length, m[0].length + Number(m[2]))}`);
      buffered = buffered.slice(m[0].length + Number(m[2]));
      const next = steps.shift();
      if (next) socket.write(next);
      else {
        socket.destroy();
        resolve();
      }
    });
    socket.on('error', reject);
    setTimeout(() => reject(new Error(`only ${answers.length} answers: ${answers.join(' | ')}; pending ${JSON.stringify(buffered)}`)), 10_000);
  });
  t.match(answers[0], /^202 \{"eventId":"evt_/, 'chunked body accepted');
  t.match(answers[1], /^202 \{"eventId":"evt_/, 'the next request on the connection accepted');
  t.match(answers[2], /^400 .*context_event_type_key_invalid/, 'the third, with a control byte in its event type, refused with its code');
  t.equal(await countRecords(backends), before + 2);
  const bodies = (await readRecords(backends)).map((r) => r.body.toString());
  t.ok(bodies.includes(one) && bodies.includes(two), 'both bodies stored as sent');
});

t.test('the header guard passes the client address on: an allowlist naming loopback accepts', async (t) => {
  await queue('allowlisted-local', { ipAllowlist: ['127.0.0.0/8'] });
  t.equal((await post('allowlisted-local', marked('accepted'))).status, 202);
});

t.test('401 missing_api_key and invalid_api_key', async (t) => {
  await refused(t, () => post('open', marked('refused'), { 'x-api-key': '' }), 401, 'missing_api_key');
  await refused(t, () => post('open', marked('refused'), { 'x-api-key': `${creds.ingressKey.slice(0, -3)}xyz` }), 401, 'invalid_api_key');
  await refused(t, () => post('open', marked('refused'), { 'x-api-key': 'qak_key_unknown00000000.secretsecretsecretsecret' }), 401, 'invalid_api_key');
});

t.test('409 queue_paused: a signed-request queue before its workspace has a signing key', (t) =>
  refused(t, () => post('signed', marked('refused')), 409, 'queue_paused'));

t.test('409 queue_paused: a payments queue without a payments secret', (t) =>
  refused(t, () => post('payments-no-secret', marked('refused'), { 'payments-signature': 't=1,v1=00' }), 409, 'queue_paused'));

t.test('401 invalid_signature, timestamp_out_of_range, replayed_request on a signed-request queue', async (t) => {
  const created = await api.manage('POST', api.tenantPath('/signing-keys'), {});
  t.equal(created.status, 201);
  const key = { keyId: created.body.keyId, secret: created.body.secret };
  const path = `/events/${tenant}/signed`;
  const send = (body: string, headers: Record<string, string>) =>
    api.request('POST', path, { raw: body, headers: { 'content-type': 'application/json', ...headers } });

  const wrong = marked('refused');
  await refused(t, () => send(wrong, signRequest({ pathAndQuery: path, body: wrong, key: { ...key, secret: 'not-the-secret' } })), 401, 'invalid_signature');
  const stale = marked('refused');
  await refused(t, () => send(stale, signRequest({ pathAndQuery: path, body: stale, key, timestamp: Math.floor(Date.now() / 1000) - 1000 })), 401, 'timestamp_out_of_range');

  const once = marked('accepted');
  const headers = signRequest({ pathAndQuery: path, body: once, key });
  t.equal((await send(once, headers)).status, 202, 'the first use of the nonce is accepted');
  await refused(t, () => send(once, headers), 401, 'replayed_request');
});

t.test('403 ip_not_allowed: the sender is outside the queue allowlist', (t) => refused(t, () => post('allowlisted', marked('refused')), 403, 'ip_not_allowed'));

t.test("403 client_scope_denied: the queue is outside the key's queue scopes", async (t) => {
  t.equal(scoped.status, 201);
  t.equal((await post('open', marked('accepted'), { 'x-api-key': scoped.body.key })).status, 202, 'in scope: accepted');
  await refused(t, () => post('grouped', marked('refused'), { 'x-api-key': scoped.body.key, 'x-service-group-key': 'g' }), 403, 'client_scope_denied');
});

t.test('403 missing_permission: a key of another workspace of the same license', (t) =>
  refused(t, () => post('open', marked('refused'), { 'x-api-key': otherKey.wire }), 403, 'missing_permission'));

t.test('404 not_found: unknown queue, unknown workspace', async (t) => {
  await refused(t, () => post('no-such-queue', marked('refused')), 404, 'not_found');
  await refused(
    t,
    () => api.request('POST', `/events/${other.publicId}x/open`, { raw: marked('refused'), headers: { 'x-api-key': creds.ingressKey } }),
    404,
    'not_found',
  );
});

t.test('409 ingress_closed and queue_archived (queue, then workspace)', async (t) => {
  await refused(t, () => post('closed', marked('refused')), 409, 'ingress_closed');
  await refused(t, () => post('archived', marked('refused')), 409, 'queue_archived');
  await refused(
    t,
    () => api.request('POST', `/events/${archivedWs.publicId}/inbox`, { raw: marked('refused'), headers: { 'x-api-key': archivedKey.wire } }),
    409,
    'queue_archived',
  );
});

t.test('422 loop_detected and max_hops_exceeded', async (t) => {
  await refused(t, () => post('open', marked('refused'), { 'x-service-path': `sg:ten_elsewhere/q, sg:${tenant}/open` }), 422, 'loop_detected');
  t.equal((await post('short-chain', marked('accepted'), { 'x-service-path': 'a,b' })).status, 202, 'two hops fit a budget of 2');
  await refused(t, () => post('short-chain', marked('refused'), { 'x-service-path': 'a,b,c' }), 422, 'max_hops_exceeded');
});

t.test('413 payload_too_large before the body is read whole', (t) =>
  refused(t, () => post('open', JSON.stringify({ marker: 'refused-big', pad: 'x'.repeat(5000) })), 413, 'payload_too_large'));

t.test('400 validation_failed: bad sandbox parameters on the sandbox route', (t) =>
  refused(
    t,
    () => api.request('POST', `/events/sandbox/${tenant}/open?sb_fail_code=abc&sb_fail_count=-1`, {
      raw: marked('refused'),
      headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json' },
    }),
    400,
    'validation_failed',
  ));

t.test('the topic holds every accepted event and none of the refused ones', async (t) => {
  const markers = (await readRecords(backends)).map((r) => JSON.parse(r.body.toString()).marker as string);
  t.same(markers.filter((m) => m.startsWith('refused')), [], 'no refused request reached Kafka');
  t.same(markers.filter((m) => m.startsWith('accepted')).sort(), [...acceptedMarkers].sort(), 'every accepted one did');
});
