import t from 'tap';
import { IpAllowlist, parseCidr } from '../../../src/auth/ip-allowlist.js';

t.test('CIDRs and bare addresses, IPv4 and IPv6', async (t) => {
  const list = new IpAllowlist(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32']);
  for (const ok of ['10.1.2.3', '10.255.255.255', '192.0.2.7', '2001:db8::1', '::ffff:10.9.9.9', '::FFFF:192.0.2.7']) t.ok(list.allows(ok), ok);
  for (const no of ['11.0.0.1', '192.0.2.8', '2001:db9::1', '127.0.0.1', '::1', '', 'localhost', '::ffff:11.0.0.1']) t.notOk(list.allows(no), no);
});

t.test('parseCidr refuses what is not an address or CIDR', async (t) => {
  t.same(parseCidr('10.0.0.0/8'), { network: '10.0.0.0', prefix: 8, family: 'ipv4' });
  t.same(parseCidr('::1'), { network: '::1', prefix: 128, family: 'ipv6' });
  for (const bad of ['10.0.0.0/33', '::/129', 'example.com', '10.0.0/8', '10.0.0.0/', '1.2.3.4/8/8', '']) t.equal(parseCidr(bad), null, bad);
});
