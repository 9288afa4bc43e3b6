import t from 'tap';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

const withTrusted = (entries: string[]) => () => loadConfig({}, { server: { proxyProtocolFrom: entries } });

// Before src/net/cidr.ts these passed a loose pattern at boot and were then
// dropped without a word when the trusted-proxy list was built.
t.test('server.proxyProtocolFrom refuses at boot what is not an address or CIDR', async (t) => {
  for (const bad of ['10.0.0.0/33', '999.1.1.1', '1::2::3', '::/129']) {
    const err = thrownBy(withTrusted([bad]));
    t.same(err instanceof ConfigError ? err.problems : err, ['server.proxyProtocolFrom[0]: must be an IP address or a CIDR such as 127.0.0.0/8'], bad);
  }
});

t.test('server.proxyProtocolFrom takes CIDRs and bare addresses', async (t) => {
  for (const ok of ['127.0.0.1', '127.0.0.1/32', '10.0.0.0/8', '::1', 'fd00::/8', '::ffff:127.0.0.1']) {
    t.same(withTrusted([ok])().server.proxyProtocolFrom, [ok], ok);
  }
});

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
    return null;
  } catch (err) {
    return err;
  }
}
