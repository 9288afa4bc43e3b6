import t from 'tap';
import fc from 'fast-check';
import { waasTestbed } from '../../../helpers/waas-testbed.js';

// Bad input gets a 4xx in the error envelope, never a 5xx: random JSON bodies
// (with the routes' own field names, wrong types, NUL, deep nesting, huge
// strings) and random path segments, thrown at every /waas route with a
// valid Build key so the handlers, not auth, see them.
const { creds, api, waas } = await waasTestbed(t);
const stream = await waas.putStream('orders');
const partner = await waas.newPartner('fuzz@partner.test');
const pkg = await waas.createPackage('Fuzz');
const T = creds.tenantPublicId;

const FIELDS = ['producerTenantPublicId', 'name', 'description', 'eventTypes', 'payloadSchema', 'isPublic', 'email', 'groupKey',
  'integrationPublicId', 'catalogEntryPublicId', 'inviteToken', 'licensePublicId', 'receivingTenantPublicId'];
const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string().map((s) => `${s}\u0000`),
  fc.constantFrom('\u0000', 'a\u0000b', '\u0007', 'x'.repeat(5000), 'é'.repeat(300), '', ' ', T, stream.publicId, partner.integrationPublicId, 'ten_\u0000aaaaaaaa'),
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer(), fc.boolean(), fc.constant(null),
);
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), nasty, { maxKeys: 6 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.constant(JSON.parse('{"a":'.repeat(50).replace(/\{"a":$/, '') + '1' + '}'.repeat(49))),
);
const segment = fc.oneof(
  fc.string({ minLength: 1 }).map(encodeURIComponent),
  fc.constantFrom('%00', '%ZZ', '%E0%A4%A', 'ten_%00aaaaaaaa', '..', '%2F', T, stream.publicId, pkg.publicId, partner.integrationPublicId),
);

// Each route with a body that is valid as a whole: a random field of it is
// then replaced by a hostile value, so the value reaches the handler's
// deepest code (and the database), not only the first validation.
const valid = {
  stream: { producerTenantPublicId: T, name: 'orders', description: 'd', eventTypes: ['a'], payloadSchema: '{}', isPublic: true },
  tenant: { producerTenantPublicId: T },
  invite: { producerTenantPublicId: T, email: 'x@partner.test' },
  accept: { inviteToken: 'qit_x', licensePublicId: creds.licensePublicId },
  sub: { catalogEntryPublicId: stream.publicId },
  activation: { producerTenantPublicId: T, groupKey: 'g', integrationPublicId: partner.integrationPublicId },
  pkg: { name: 'n', description: 'd' },
};
const routes: Array<[string, (s: string) => string, Record<string, unknown>?]> = [
  ['PUT', () => '/waas/streams', valid.stream],
  ['POST', () => '/waas/enable-producer', valid.tenant],
  ['GET', (s) => `/waas/producer/${s}/catalog`],
  ['GET', (s) => `/waas/producer/${T}/metrics/series?history=${s}`],
  ['POST', () => '/waas/integrations', valid.invite],
  ['GET', (s) => `/waas/producer/${s}/integrations`],
  ['POST', (s) => `/waas/integrations/${s}/accept`, valid.accept],
  ['POST', (s) => `/waas/integrations/${s}/subscriptions`, valid.sub],
  ['POST', () => `/waas/integrations/${partner.integrationPublicId}/subscriptions`, valid.sub],
  ['GET', (s) => `/waas/integrations/${s}/subscriptions`],
  ['DELETE', (s) => `/waas/integrations/${partner.integrationPublicId}/subscriptions/${s}`],
  ['POST', () => '/waas/activations', valid.activation],
  ['DELETE', () => '/waas/activations', valid.activation],
  ['POST', () => `/waas/producer/${T}/packages`, valid.pkg],
  ['PUT', (s) => `/waas/producer/${T}/packages/${s}`, valid.pkg],
  ['PUT', () => `/waas/producer/${T}/packages/${pkg.publicId}`, valid.pkg],
  ['POST', (s) => `/waas/producer/${T}/packages/${s}/streams`, valid.sub],
  ['POST', () => `/waas/producer/${T}/packages/${pkg.publicId}/streams`, valid.sub],
  ['DELETE', (s) => `/waas/producer/${T}/packages/${pkg.publicId}/streams/${s}`],
  ['POST', (s) => `/waas/producer/${T}/packages/${s}/archive`],
  ['POST', (s) => `/waas/producer/${T}/integrations/${s}/blocks/streams/${s}`],
  ['DELETE', (s) => `/waas/producer/${T}/integrations/${partner.integrationPublicId}/blocks/packages/${s}`],
];

for (const [method, path, base] of routes) {
  const bodies = base
    ? fc.oneof(
        { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...Object.keys(base), ...FIELDS), nasty).map(([k, v]) => ({ ...base, [k]: v })) },
        { weight: 1, arbitrary: body },
      )
    : fc.constant(undefined);
  t.test(`${method} ${path('{x}')}${base ? ' (valid body, one field hostile)' : ''}: no input gives a 5xx`, async (t) => {
    await fc.assert(
      fc.asyncProperty(segment, bodies, async (s, b) => {
        const res = await api.request(method, path(s), {
          raw: b === undefined ? undefined : JSON.stringify(b),
          headers: { 'content-type': 'application/json', 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId },
        });
        if (res.status >= 500) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${path(s)} ${JSON.stringify(b)?.slice(0, 200)}`);
        if (res.status >= 400 && typeof res.body?.error?.code !== 'string') throw new Error(`no error envelope: ${res.status}`);
      }),
      { numRuns: 40 },
    );
    t.pass('40 random requests, every answer below 500');
  });
}
