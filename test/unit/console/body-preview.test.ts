import t from 'tap';
import { bodyPreview } from '../../../console/src/body-preview.js';

const bytes = (s: string) => new TextEncoder().encode(s);

t.test('JSON is pretty-printed', async (t) => {
  t.same(bodyPreview(bytes('{"a":1,"b":[true,null]}')), { kind: 'json', text: '{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}' });
});

t.test('other UTF-8 text is shown as it is', async (t) => {
  t.same(bodyPreview(bytes('name=ä&x=1\n')), { kind: 'text', text: 'name=ä&x=1\n' });
});

t.test('invalid UTF-8 and control bytes are shown as hex, 16 bytes a line', async (t) => {
  const bin = Uint8Array.from([0xff, 0x00, 0x01, ...Array.from({ length: 15 }, (_, i) => i + 0x41)]);
  t.same(bodyPreview(bin), { kind: 'hex', text: '000000  ff 00 01 41 42 43 44 45 46 47 48 49 4a 4b 4c 4d\n000010  4e 4f' });
  t.equal(bodyPreview(bytes('a\u0000b')).kind, 'hex', 'a NUL makes text binary');
});

t.test('a long binary body is cut at the limit and says how much is left', async (t) => {
  const out = bodyPreview(new Uint8Array(40).fill(0xfe), 32);
  t.equal(out.kind, 'hex');
  t.same(out.text.split('\n'), ['000000  ' + Array(16).fill('fe').join(' '), '000010  ' + Array(16).fill('fe').join(' '), '… 8 more bytes']);
});
