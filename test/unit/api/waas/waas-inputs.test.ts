import t from 'tap';
import { checkBody } from '../../../../src/api/json-body.js';
import { readActivation } from '../../../../src/api/waas/waas-activations.js';
import { checkCatalogEntryRef, groupKeyProblem } from '../../../../src/api/waas/waas-context.js';
import { IntegrationAcceptInput, IntegrationInviteInput } from '../../../../src/api/waas/waas-integrations.js';
import { readPackage } from '../../../../src/api/waas/waas-packages.js';
import { EnableProducerInput, readStream } from '../../../../src/api/waas/waas-streams.js';
import { ServiceError, type FieldProblem } from '../../../../src/errors.js';
import { compileBody } from '../../../../src/schema/body-validator.js';

const T = 'ten_abcdefgh12';
const INT = 'int_abcdefgh12';
const CAT = 'cat_abcdefgh12';
const LIC = 'lic_abcdefgh12';

/** The problems a read throws (validation_failed), sorted by field; [] when it passes. */
function problemsOf(read: () => unknown): FieldProblem[] {
  try {
    read();
    return [];
  } catch (err) {
    if (!(err instanceof ServiceError) || err.code !== 'validation_failed') throw err;
    return [...(err.details as FieldProblem[])].sort((a, b) => a.field.localeCompare(b.field));
  }
}
const fields = (read: () => unknown) => problemsOf(read).map((p) => p.field);

t.test('PUT /waas/streams: the desired state, absent and null fields at their defaults', async (t) => {
  const full = { producerTenantPublicId: T, name: 'orders.v1', description: 'd', eventTypes: ['order.created', 'é 🙂'], payloadSchema: ' {"x":1} ', isPublic: true };
  t.same(readStream(full), {
    tenant: T,
    input: { name: 'orders.v1', description: 'd', eventTypes: ['order.created', 'é 🙂'], payloadSchema: ' {"x":1} ', status: 'Published' },
  });
  const bare = { tenant: T, input: { name: 'o', description: '', eventTypes: [], payloadSchema: null, status: 'Deprecated' } };
  t.same(readStream({ producerTenantPublicId: T, name: 'o' }), bare);
  t.same(readStream({ producerTenantPublicId: T, name: 'o', description: null, eventTypes: null, payloadSchema: null, isPublic: null }), bare, 'null is "not given"');
  t.same(readStream({ producerTenantPublicId: T, name: 'o', isPublic: false }).input.status, 'Deprecated');
});

t.test('PUT /waas/streams: each bad field is named, list items by index', async (t) => {
  t.same(fields(() => readStream({})), ['name', 'producerTenantPublicId'], 'both required');
  t.same(fields(() => readStream({ producerTenantPublicId: 'ten_x', name: '-bad', description: 'x'.repeat(4001), payloadSchema: {}, isPublic: 'yes', colour: 1 })), [
    'colour', 'description', 'isPublic', 'name', 'payloadSchema', 'producerTenantPublicId',
  ]);
  t.same(fields(() => readStream({ producerTenantPublicId: T, name: 'x'.repeat(101) })), ['name'], 'a stream name is at most 100 characters');
  t.same(fields(() => readStream({ producerTenantPublicId: T, name: 'o', eventTypes: ['ok', 3, '', 'a\u0007', 'x'.repeat(256)] })), [
    'eventTypes[1]', 'eventTypes[2]', 'eventTypes[3]', 'eventTypes[4]',
  ]);
  t.same(problemsOf(() => readStream({ producerTenantPublicId: T, name: 'o', eventTypes: ['x'.repeat(256)] })), [
    { field: 'eventTypes[0]', problem: 'must be a string of 1-255 characters without control characters' },
  ]);
  t.same(fields(() => readStream({ producerTenantPublicId: T, name: 'o', eventTypes: ['x'.repeat(255)] })), [], '255 characters is the limit');
  t.same(fields(() => readStream({ producerTenantPublicId: T, name: 'o', eventTypes: ['a', 'b', 'a'] })), ['eventTypes'], 'a repeated type');
  t.same(fields(() => readStream({ producerTenantPublicId: T, name: 'o', eventTypes: 'a' })), ['eventTypes'], 'a list');
  t.same(fields(() => readStream({ producerTenantPublicId: T, name: 'o', eventTypes: Array.from({ length: 1001 }, (_, i) => `t${i}`) })), ['eventTypes'], 'at most 1000');
  t.same(fields(() => readStream({ producerTenantPublicId: T, name: 'o', eventTypes: Array.from({ length: 1000 }, (_, i) => `t${i}`) })), []);
});

t.test('POST /waas/enable-producer', async (t) => {
  const check = compileBody(EnableProducerInput);
  t.same(checkBody({ producerTenantPublicId: T }, check), { producerTenantPublicId: T });
  t.same(fields(() => checkBody({}, check)), ['producerTenantPublicId']);
  t.same(fields(() => checkBody({ producerTenantPublicId: 'lic_abcdefgh12', extra: 1 }, check)), ['extra', 'producerTenantPublicId']);
});

t.test('POST and DELETE /waas/activations: the triple; the group key as ingress bounds it', async (t) => {
  const body = { producerTenantPublicId: T, groupKey: 'customer-7', integrationPublicId: INT };
  t.same(readActivation(body, 255), body);
  t.same(fields(() => readActivation({}, 255)), ['groupKey', 'integrationPublicId', 'producerTenantPublicId']);
  t.same(fields(() => readActivation({ ...body, groupKey: 'a\u0007b', integrationPublicId: 'nope' }, 255)), ['groupKey', 'integrationPublicId']);
  for (const bad of ['', 'a\u0085b', 7, null]) {
    t.same(problemsOf(() => readActivation({ ...body, groupKey: bad }, 255)), [{ field: 'groupKey', problem: 'must be a non-empty string without control characters' }], JSON.stringify(bad));
  }
  t.same(readActivation({ ...body, groupKey: 'é'.repeat(127) }, 255).groupKey, 'é'.repeat(127), '254 bytes');
  t.same(problemsOf(() => readActivation({ ...body, groupKey: 'é'.repeat(128) }, 255)), [
    { field: 'groupKey', problem: 'must be at most 255 bytes without control characters' },
  ], 'the bound is in bytes, not characters');
  t.same(fields(() => readActivation({ ...body, groupKey: 'abcd' }, 3)), ['groupKey'], 'the configured bound');
  t.same(problemsOf(() => readActivation({ ...body, groupKey: 'é'.repeat(128), integrationPublicId: 'nope' }, 255)), [
    { field: 'groupKey', problem: 'must be at most 255 bytes without control characters' },
    { field: 'integrationPublicId', problem: 'has an invalid format' },
  ], 'the byte bound and a bad field of the schema in one answer');
});

t.test('groupKeyProblem: the limits ingress applies, on any string', async (t) => {
  t.equal(groupKeyProblem('customer-7', 255), null);
  t.equal(groupKeyProblem('', 255), 'must not be empty');
  t.equal(groupKeyProblem('a\u0000', 255), 'must be at most 255 bytes without control characters');
  t.equal(groupKeyProblem('a\u009f', 255), 'must be at most 255 bytes without control characters');
  t.equal(groupKeyProblem('🙂', 4), null);
  t.equal(groupKeyProblem('🙂', 3), 'must be at most 3 bytes without control characters');
});

t.test('POST /waas/integrations (invite) and …/accept', async (t) => {
  const invite = compileBody(IntegrationInviteInput);
  t.same(checkBody({ producerTenantPublicId: T, email: 'ops@partner.test' }, invite), { producerTenantPublicId: T, email: 'ops@partner.test' });
  t.same(fields(() => checkBody({ producerTenantPublicId: T }, invite)), ['email']);
  for (const email of ['no-at.test', 'a@b', 'a b@c.test', '<a@b.test>', `${'a'.repeat(65)}@b.test`, `a@${'b'.repeat(250)}.test`, 3]) {
    t.same(fields(() => checkBody({ producerTenantPublicId: T, email }, invite)), ['email'], String(email));
  }
  const accept = compileBody(IntegrationAcceptInput);
  t.same(checkBody({ inviteToken: 'qit_x', licensePublicId: null, receivingTenantPublicId: null }, accept).licensePublicId, null, 'null is "not given"');
  t.same(checkBody({ inviteToken: 'qit_x', licensePublicId: LIC, receivingTenantPublicId: T }, accept), { inviteToken: 'qit_x', licensePublicId: LIC, receivingTenantPublicId: T });
  t.same(fields(() => checkBody({ token: 'x' }, accept)), ['inviteToken', 'token']);
  t.same(fields(() => checkBody({ inviteToken: 'x'.repeat(201), licensePublicId: T, receivingTenantPublicId: LIC }, accept)), [
    'inviteToken', 'licensePublicId', 'receivingTenantPublicId',
  ]);
});

t.test('packages: name and description', async (t) => {
  t.same(readPackage({ name: 'Orders' }), { name: 'Orders' }, 'an absent description stays absent (PUT keeps the current one)');
  t.same(readPackage({ name: 'Orders', description: null }), { name: 'Orders', description: null }, 'null clears it');
  t.same(readPackage({ name: ' x ', description: 'd'.repeat(4000) }).description, 'd'.repeat(4000));
  for (const name of ['', '   ', '\t\n', 'x'.repeat(201), 3, null]) {
    t.same(problemsOf(() => readPackage({ name })), [{ field: 'name', problem: 'must be a string of at most 200 characters, not blank' }], JSON.stringify(name));
  }
  t.same(fields(() => readPackage({ name: '', extra: 1 })), ['extra', 'name']);
  t.same(fields(() => readPackage({ description: 'd'.repeat(4001) })), ['description', 'name']);
});

t.test('a stream by its catalog entry id (subscriptions, package streams)', async (t) => {
  t.same(checkBody({ catalogEntryPublicId: CAT }, checkCatalogEntryRef), { catalogEntryPublicId: CAT });
  t.same(fields(() => checkBody({}, checkCatalogEntryRef)), ['catalogEntryPublicId']);
  t.same(fields(() => checkBody({ catalogEntryPublicId: INT }, checkCatalogEntryRef)), ['catalogEntryPublicId']);
  t.same(fields(() => checkBody({ catalogEntryPublicId: CAT, x: 1 }, checkCatalogEntryRef)), ['x']);
});
