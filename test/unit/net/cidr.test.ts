import t from 'tap';
import { addressBytes, embeddedV4, familyOf, NetworkSet, parseCidr } from '../../../src/net/cidr.js';

t.test('parseCidr reads IPv4 and IPv6 networks and bare addresses', async (t) => {
  t.same(parseCidr('10.0.0.0/8'), { network: '10.0.0.0', prefix: 8, family: 'ipv4' });
  t.same(parseCidr('2001:db8::/32'), { network: '2001:db8::', prefix: 32, family: 'ipv6' });
  t.same(parseCidr('192.0.2.7'), { network: '192.0.2.7', prefix: 32, family: 'ipv4' }, 'a bare v4 address is that host');
  t.same(parseCidr('::1'), { network: '::1', prefix: 128, family: 'ipv6' }, 'a bare v6 address is that host');
  t.same(parseCidr('::ffff:10.0.0.0/104'), { network: '::ffff:10.0.0.0', prefix: 104, family: 'ipv6' }, 'mapped v6 with a dotted tail');
});

t.test('prefix bounds: 0 up to 32 (v4) or 128 (v6)', async (t) => {
  for (const ok of ['0.0.0.0/0', '10.0.0.0/32', '::/0', '::1/128']) t.not(parseCidr(ok), null, ok);
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/1234', '10.0.0.0/-1', '10.0.0.0/', '10.0.0.0/8/8']) t.equal(parseCidr(bad), null, bad);
});

t.test('bad input is null, never an exception', async (t) => {
  for (const bad of ['', 'example.com', '10.0.0/8', '999.1.1.1', '1.2.3.04', '1::2::3', ' 10.0.0.0/8', '10.0.0.0/8 ', '10.0.0.0 /8', '/8']) {
    t.equal(parseCidr(bad), null, JSON.stringify(bad));
  }
});

t.test('bareAddress: false asks for a prefix', async (t) => {
  t.equal(parseCidr('127.0.0.1', { bareAddress: false }), null);
  t.not(parseCidr('127.0.0.0/8', { bareAddress: false }), null);
});

t.test('host bits set: the network is what the prefix keeps', async (t) => {
  t.same(parseCidr('10.1.2.3/8'), { network: '10.1.2.3', prefix: 8, family: 'ipv4' }, 'accepted as written');
  const set = NetworkSet.parse(['10.1.2.3/8', 'fe80::1/10']);
  for (const inside of ['10.0.0.0', '10.255.255.255', 'fe80::', 'febf:ffff::1']) t.ok(set.has(inside), inside);
  for (const outside of ['11.0.0.0', '9.255.255.255', 'fec0::1']) t.notOk(set.has(outside), outside);
});

t.test('NetworkSet matches v4 and v6 addresses', async (t) => {
  const set = NetworkSet.parse(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32']);
  for (const ok of ['10.1.2.3', '10.255.255.255', '192.0.2.7', '2001:db8::1', '2001:DB8:ffff::1']) t.ok(set.has(ok), ok);
  for (const no of ['11.0.0.1', '192.0.2.8', '2001:db9::1', '::1', '', 'localhost', '10.0.0.1 ', '10.0.0']) t.notOk(set.has(no), JSON.stringify(no));
});

// Node's BlockList does this for us; these cases fail if a Node version stops doing it.
t.test('an IPv4-mapped IPv6 address is the IPv4 host it carries, both ways', async (t) => {
  const v4 = NetworkSet.parse(['10.0.0.0/8']);
  for (const mapped of ['::ffff:10.9.9.9', '::FFFF:10.9.9.9', '::ffff:a09:909', '0:0:0:0:0:ffff:a09:909']) t.ok(v4.has(mapped), mapped);
  t.notOk(v4.has('::ffff:11.0.0.1'));
  t.notOk(v4.has('::a09:909'), 'IPv4-compatible is a different host to BlockList: see embeddedV4');
  const v6 = NetworkSet.parse(['::ffff:10.0.0.0/104']);
  t.ok(v6.has('10.1.2.3'), 'a mapped range holds the IPv4 address');
  t.notOk(v6.has('11.1.2.3'));
});

t.test('a zone does not take a link-local address out of its range', async (t) => {
  t.ok(NetworkSet.parse(['fe80::/10']).has('fe80::1%eth0'));
});

t.test('NetworkSet.parse refuses a bad entry by name', async (t) => {
  t.throws(() => NetworkSet.parse(['10.0.0.0/8', 'nope']), /"nope"/);
});

t.test('familyOf', async (t) => {
  t.equal(familyOf('1.2.3.4'), 'ipv4');
  t.equal(familyOf('::ffff:1.2.3.4'), 'ipv6');
  t.equal(familyOf('1.2.3'), null);
});

t.test('embeddedV4 finds the IPv4 host in every IPv6 form that carries one', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['::7f00:1', '127.0.0.1'],
    ['::127.0.0.1', '127.0.0.1'],
    ['::ffff:0:7f00:1', '127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['2002:a00:1::', '10.0.0.1'],
    ['::1', null],
    ['::', null],
    ['2001:db8::1', null],
    ['127.0.0.1', null],
    ['not an address', null],
  ];
  for (const [address, v4] of cases) t.equal(embeddedV4(address), v4, address);
});

t.test('addressBytes gives network byte order', async (t) => {
  t.same([...addressBytes('192.0.2.7')!], [192, 0, 2, 7]);
  t.equal(addressBytes('2001:db8::1')!.toString('hex'), '20010db8000000000000000000000001');
  t.equal(addressBytes('::ffff:10.0.0.1')!.toString('hex'), '00000000000000000000ffff0a000001');
  t.equal(addressBytes('fe80::1%eth0')!.toString('hex'), 'fe800000000000000000000000000001');
  t.equal(addressBytes('1.2.3'), null);
  t.equal(addressBytes(''), null);
});
