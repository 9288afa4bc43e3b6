import t from 'tap';
import { liftMappedHeaders } from '../../../src/ingress/mapped-headers.js';
import { RequestValues } from '../../../src/ingress/request-values.js';
import type { MappedHeader } from '../../../src/routing/queue-settings.js';

const values = new RequestValues({ 'x-trace': 'tr-1', 'x-tab': 'a\tb' }, 'region=eu&long=' + 'x'.repeat(50), Buffer.from('{"c":42,"nl":"a\\nb","cjk":"東","latin":"café","obj":{}}'));
const map = (source: 'header' | 'query' | 'body', name: string, as: string, required = false): MappedHeader => ({ from: { source, name }, as, required });

t.test('values are lifted in the configured order; absent optional ones are skipped', async (t) => {
  t.same(liftMappedHeaders([map('body', 'c', 'X-C'), map('query', 'region', 'X-R'), map('body', 'none', 'X-N'), map('header', 'x-trace', 'X-T')], values, 100), [
    ['X-C', '42'], ['X-R', 'eu'], ['X-T', 'tr-1'],
  ]);
  t.equal(liftMappedHeaders([], values, 100), undefined, 'no mapped headers: nothing stored');
  t.equal(liftMappedHeaders([map('body', 'none', 'X-N')], values, 100), undefined, 'nothing found: nothing stored');
  t.same(liftMappedHeaders([map('header', 'x-tab', 'X-Tab'), map('body', 'latin', 'X-L')], values, 100), [['X-Tab', 'a\tb'], ['X-L', 'café']], 'HTAB and Latin-1 can travel in a header');
});

t.test('refusals', async (t) => {
  t.throws(() => liftMappedHeaders([map('body', 'none', 'X-N', true)], values, 100), { code: 'outbound_header_required', status: 400 });
  t.throws(() => liftMappedHeaders([map('body', 'nl', 'X-NL')], values, 100), { code: 'outbound_header_invalid' }, 'a newline would split the header');
  t.throws(() => liftMappedHeaders([map('body', 'cjk', 'X-J')], values, 100), { code: 'outbound_header_invalid' }, 'beyond Latin-1');
  t.throws(() => liftMappedHeaders([map('body', 'obj', 'X-O')], values, 100), { code: 'outbound_header_invalid' }, 'not a scalar');
  t.throws(() => liftMappedHeaders([map('query', 'long', 'X-Long')], values, 49), { code: 'outbound_header_invalid' }, 'over the byte limit');
});
