import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import t from 'tap';
import { loadConfig } from '../../../src/config/load-config.js';
import { createLogger } from '../../../src/observability/logger.js';

const hex = randomBytes(32).toString('hex');
const b64 = randomBytes(32).toString('base64');

t.test('signing.keyEncryptionKey: "" by default, from STREAMGATE_KEY_ENCRYPTION_KEY, 32 bytes as hex or base64', async (t) => {
  t.equal(loadConfig({}).signing.keyEncryptionKey, '');
  t.equal(loadConfig({ STREAMGATE_KEY_ENCRYPTION_KEY: hex }).signing.keyEncryptionKey, hex);
  t.equal(loadConfig({ STREAMGATE_KEY_ENCRYPTION_KEY: b64 }).signing.keyEncryptionKey, b64);
  for (const bad of ['short', hex.slice(2), `${b64}x`, randomBytes(16).toString('base64')]) {
    let message = '';
    try {
      loadConfig({ STREAMGATE_KEY_ENCRYPTION_KEY: bad });
    } catch (err) {
      message = (err as Error).message;
    }
    t.match(message, /signing\.keyEncryptionKey: must be 32 bytes/, 'refused at boot, naming the setting');
    t.notOk(message.includes(bad), 'without quoting the value');
  }
});

t.test('the logger redacts the key encryption key wherever the config is logged', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
  const log = createLogger('info', 'test', sink);
  const config = loadConfig({ STREAMGATE_KEY_ENCRYPTION_KEY: b64 });
  log.info({ config }, 'whole config');
  log.info({ signing: config.signing }, 'signing section');
  log.info(config.signing, 'the section itself');
  log.info({ settings: { signing: config.signing } }, 'nested deeper');
  t.equal(lines.length, 4);
  for (const line of lines) {
    t.notOk(line.includes(b64), 'key not written');
    t.match(line, /\[redacted\]/);
  }
});
