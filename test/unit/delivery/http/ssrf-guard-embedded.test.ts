import t from 'tap';
import { SsrfGuard } from '../../../../src/delivery/http/ssrf-guard.js';

// Every IPv6 spelling that carries an IPv4 host reaches that host: judge it so.
const LOOPBACK_IN_V6 = [
  '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '::ffff:0:7f00:1', '::7f00:1',
  '64:ff9b::7f00:1', '64:ff9b:0:0:0:0:7f00:1', '2002:7f00:1::', '2002:a9fe:a9fe::1',
];

t.test('IPv6 addresses embedding a refused IPv4 host are refused, however spelled', async (t) => {
  const guard = new SsrfGuard([]);
  for (const a of LOOPBACK_IN_V6) t.equal(guard.isAllowed(a), false, a);
});

t.test('they follow the IPv4 allow list', async (t) => {
  const guard = new SsrfGuard(['127.0.0.0/8']);
  t.equal(guard.isAllowed('::ffff:7f00:1'), true);
  t.equal(guard.isAllowed('64:ff9b::a00:1'), false, '10.0.0.1 stays refused');
  t.equal(guard.isAllowed('::ffff:5db8:d822'), true, 'a public IPv4 inside IPv6 is allowed');
});
