import t from 'tap';
import { proxyHeader } from '../../../src/http/header-guard.js';

// PROXY v2 (HAProxy's binary form): 12-byte signature, version/command, family, length, addresses, ports.
const SIGNATURE = '0d0a0d0a000d0a515549540a';

t.test('IPv4 client: source and destination as 4 bytes each', async (t) => {
  t.equal(proxyHeader('192.0.2.7', 40000, '127.0.0.1', 8080).toString('hex'), `${SIGNATURE}2111000cc0000207` + '7f0000019c401f90');
});

t.test('IPv6 client: 16 bytes each, an IPv4 local address in its mapped form', async (t) => {
  t.equal(
    proxyHeader('2001:db8::1', 1, '127.0.0.1', 2).toString('hex'),
    `${SIGNATURE}21210024` + '20010db8000000000000000000000001' + '00000000000000000000ffff7f000001' + '00010002',
  );
  t.equal(
    proxyHeader('::ffff:10.0.0.1', 1, '::1', 2).toString('hex'),
    `${SIGNATURE}21210024` + '00000000000000000000ffff0a000001' + '00000000000000000000000000000001' + '00010002',
  );
});

t.test('no readable client address: the LOCAL command, no addresses', async (t) => {
  t.equal(proxyHeader('', 0, '', 0).toString('hex'), `${SIGNATURE}20000000`);
});
