import t from 'tap';
import { loadConfig } from '../../../src/config/load-config.js';

t.test('console defaults: dist/console, no public URL, 12 h sessions', async (t) => {
  const cfg = loadConfig({});
  t.same(cfg.console, { dir: '', publicUrl: '', sessionTtlSeconds: 43_200, oidcClientSecret: '' });
});

t.test('console.publicUrl is an origin (scheme, host, port), nothing more', async (t) => {
  for (const ok of ['https://sg.example.com', 'http://127.0.0.1:8080']) {
    t.equal(loadConfig({}, { console: { publicUrl: ok } }).console.publicUrl, ok);
  }
  for (const bad of ['sg.example.com', 'https://sg.example.com/console', 'ftp://x', 'https://a b']) {
    t.throws(() => loadConfig({}, { console: { publicUrl: bad } }), /console\.publicUrl/, bad);
  }
  t.throws(() => loadConfig({}, { console: { sessionTtlSeconds: 10 } }), /console\.sessionTtlSeconds/);
});
