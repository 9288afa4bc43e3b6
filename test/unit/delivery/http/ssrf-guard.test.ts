import t from 'tap';
import { SsrfGuard } from '../../../../src/delivery/http/ssrf-guard.js';
import { ServiceError } from '../../../../src/errors.js';

const REFUSED: Array<[string, string]> = [
  ['127.0.0.1', 'IPv4 loopback'],
  ['127.255.255.254', 'IPv4 loopback, end of range'],
  ['10.1.2.3', 'private 10/8'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'private 172.16/12, end of range'],
  ['192.168.1.1', 'private 192.168/16'],
  ['100.64.0.1', 'CGNAT'],
  ['169.254.169.254', 'link-local / cloud metadata'],
  ['0.0.0.0', 'unspecified'],
  ['::1', 'IPv6 loopback'],
  ['::', 'IPv6 unspecified'],
  ['fe80::1', 'IPv6 link-local'],
  ['fc00::1', 'unique-local fc00::/7'],
  ['fd00::1', 'unique-local fd00::/8'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of 169.254.169.254'],
  ['64:ff9b::127.0.0.1', 'NAT64 of loopback, dotted'],
];

const ALLOWED = ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '2001:4860:4860::8888', '::ffff:93.184.216.34'];

t.test('internal addresses are refused by default', async (t) => {
  const guard = new SsrfGuard([]);
  for (const [address, why] of REFUSED) t.equal(guard.isAllowed(address), false, `${address} (${why})`);
});

t.test('public addresses are allowed', async (t) => {
  const guard = new SsrfGuard([]);
  for (const address of ALLOWED) t.equal(guard.isAllowed(address), true, address);
});

t.test('a non-address is never allowed', async (t) => {
  const guard = new SsrfGuard([]);
  t.equal(guard.isAllowed('example.com'), false);
  t.equal(guard.isAllowed(''), false);
});

t.test('allowNetworks opens only the named network', async (t) => {
  const guard = new SsrfGuard(['127.0.0.0/8']);
  t.equal(guard.isAllowed('127.0.0.1'), true);
  t.equal(guard.isAllowed('127.1.2.3'), true);
  t.equal(guard.isAllowed('::ffff:127.0.0.1'), true, 'mapped form of an allowed address');
  t.equal(guard.isAllowed('10.1.2.3'), false, 'other private ranges stay refused');
  t.equal(guard.isAllowed('169.254.169.254'), false);
  t.equal(guard.isAllowed('::1'), false, 'IPv6 loopback is a different network');
  t.equal(guard.isAllowed('93.184.216.34'), true, 'public stays allowed');
});

t.test('allowNetworks accepts IPv6 CIDRs', async (t) => {
  const guard = new SsrfGuard(['::1/128']);
  t.equal(guard.isAllowed('::1'), true);
  t.equal(guard.isAllowed('127.0.0.1'), false);
});

/** The error checkUrl rejects with, or null when it accepts. */
function rejectionOf(guard: SsrfGuard, url: string): Promise<unknown> {
  return guard.checkUrl(url).then(
    () => null,
    (e: unknown) => e,
  );
}

const REFUSED_URLS = [
  'ftp://93.184.216.34/file',
  'file:///etc/passwd',
  'not a url',
  'http://',
  'http://127.0.0.1/hook',
  'http://[::1]:8080/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://2130706433/hook', // 127.0.0.1 written as one decimal integer
  'https://169.254.169.254/latest/meta-data/',
  'http://localhost:9/x', // a name that resolves to loopback
  'http://no-such-host.invalid/x', // a name that resolves to nothing
];

t.test('checkUrl refuses bad schemes, invalid URLs and internal or unresolvable hosts', async (t) => {
  const guard = new SsrfGuard([]);
  for (const url of REFUSED_URLS) {
    const err = await rejectionOf(guard, url);
    t.type(err, ServiceError, `${url} is refused with a ServiceError`);
    if (!(err instanceof ServiceError)) continue;
    t.equal(err.code, 'validation_failed', `${url}: code`);
    t.equal(err.status, 400, `${url}: status`);
    const details = Array.isArray(err.details) ? err.details : [];
    t.ok(details.some((d) => d.field === 'url'), `${url}: details name field url`);
  }
});

t.test('checkUrl accepts loopback when the operator allows it, and public literals', async (t) => {
  await t.resolves(new SsrfGuard(['127.0.0.0/8']).checkUrl('http://127.0.0.1:9/x'));
  await t.resolves(new SsrfGuard([]).checkUrl('https://93.184.216.34/hook'));
  await t.resolves(new SsrfGuard([]).checkUrl('https://[2606:4700::1111]/hook'));
});

t.test('connect-time lookup refuses internal addresses with ESSRF', async (t) => {
  const guard = new SsrfGuard([]);
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => guard.lookup('localhost', {}, (e) => resolve(e)));
  t.equal(err?.code, 'ESSRF');
  const allowed = new SsrfGuard(['127.0.0.0/8', '::1/128']);
  const address = await new Promise<unknown>((resolve, reject) =>
    allowed.lookup('localhost', {}, (e, a) => (e ? reject(e) : resolve(a))),
  );
  t.type(address, 'string', 'single-address form when all is not requested');
});
