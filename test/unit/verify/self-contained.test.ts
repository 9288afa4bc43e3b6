import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import t from 'tap';
import { canonicalQuery as serviceCanonicalQuery } from '../../../src/auth/canonical-query.js';
import { canonicalQuery } from '../../../src/verify/canonical-query.js';
import { base64Decode, base64Encode, hexDecode, hexEncode } from '../../../src/verify/encoding.js';

// src/verify is published on its own (streamgate/verify) and runs outside
// Node: it imports nothing but its own files and uses no Node API.

const dir = fileURLToPath(new URL('../../../src/verify/', import.meta.url));

t.test('src/verify imports only its own files and no Node API', async (t) => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  t.ok(files.includes('index.ts'));
  for (const f of files) {
    const text = readFileSync(`${dir}${f}`, 'utf8');
    const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
    t.same(specifiers.filter((s) => !/^\.\/[a-z-]+\.js$/.test(s)), [], `${f} imports only ./*.js`);
    const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    t.notMatch(code, /\bBuffer\b|\bprocess\b|\brequire\(|node:/, `${f} uses no Node API`);
  }
});

t.test('the canonical query is the service one, byte for byte', async (t) => {
  const piece = fc.oneof(fc.string(), fc.constantFrom('%', '%2', '%zz', '%7e', '%7E', '+', '=', '&', '?', '%C3%A9', 'é', '😀', '%FF', '~'));
  fc.assert(fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
    const raw = parts.join('');
    return canonicalQuery(raw) === serviceCanonicalQuery(raw);
  }), { numRuns: 2000 });
  t.pass('2000 queries agree');
});

t.test('base64 and hex agree with Buffer', async (t) => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
    const b = Buffer.from(bytes);
    return base64Encode(bytes) === b.toString('base64') &&
      Buffer.from(base64Decode(b.toString('base64'))!).equals(b) &&
      Buffer.from(base64Decode(b.toString('base64url'))!).equals(b) &&
      hexEncode(bytes) === b.toString('hex') &&
      Buffer.from(hexDecode(b.toString('hex'))!).equals(b);
  }), { numRuns: 1000 });
  for (const bad of ['a', 'ab=c', 'abc==', '!!!!', 'abcde', 'ab===']) t.equal(base64Decode(bad), null, `${JSON.stringify(bad)} is not base64`);
  t.equal(hexDecode('abc'), null);
  t.equal(hexDecode('zz'), null);
});
