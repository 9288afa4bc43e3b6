import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ServiceError, errorCatalog, errorEnvelope, isServiceError, type ErrorCode } from '../../src/errors.js';

const SPEC_DIR = fileURLToPath(new URL('../../../shared/spec/', import.meta.url));
const catalog: Record<string, { status: number; message: string }> = errorCatalog;

/** code → status from the table in reference.md "## 7. Errors". */
function referenceTable(): Map<string, number> {
  const text = readFileSync(`${SPEC_DIR}reference.md`, 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('7. Errors'));
  if (!section) throw new Error('reference.md has no "## 7. Errors" section');
  const out = new Map<string, number>();
  for (const line of section.split('\n')) {
    const m = /^\|\s*(\d{3})\s*\|([^|]+)\|/.exec(line);
    if (!m) continue;
    for (const code of m[2]!.split(',').map((c) => c.trim())) {
      if (/^[a-z_]+$/.test(code)) out.set(code, Number(m[1]));
    }
  }
  return out;
}

/** code → status from contract.md §1 ("`unauthorized` (401)" ...). */
function contractCodes(): Map<string, number> {
  const text = readFileSync(`${SPEC_DIR}contract.md`, 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('1. '))!;
  const out = new Map<string, number>();
  for (const m of section.matchAll(/`([a-z_]+)`\s*\((\d{3})/g)) out.set(m[1]!, Number(m[2]));
  return out;
}

t.test('every catalog entry is well-formed', async (t) => {
  const entries = Object.entries(catalog);
  t.ok(entries.length > 0);
  for (const [code, spec] of entries) {
    t.match(code, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/, `${code} is snake_case`);
    t.ok(Number.isInteger(spec.status) && spec.status >= 400 && spec.status <= 599, `${code}: status ${spec.status} is 4xx/5xx`);
    t.ok(typeof spec.message === 'string' && spec.message.trim().length > 0, `${code}: has a message`);
  }
});

t.test("every code of docs/api.md#errors's table is in the catalog with the table's status", async (t) => {
  const table = referenceTable();
  t.ok(table.size >= 20, `parsed ${table.size} codes from the table`);
  t.ok(table.has('loop_detected') && table.has('context_event_type_key_invalid'), 'parser sanity');
  for (const [code, status] of table) {
    t.ok(code in catalog, `${code} is in the catalog`);
    t.equal(catalog[code]?.status, status, `${code} → ${status}`);
  }
});

t.test("every management code of docs/api.md#conventions is in the catalog with the contract's status", async (t) => {
  const codes = contractCodes();
  t.ok(codes.size >= 10, `parsed ${codes.size} codes from the contract`);
  for (const [code, status] of codes) t.equal(catalog[code]?.status, status, `${code} → ${status}`);
});

t.test('ServiceError takes status and default message from the catalog', async (t) => {
  const err = new ServiceError('not_found');
  t.equal(err.code, 'not_found');
  t.equal(err.status, 404);
  t.equal(err.message, errorCatalog.not_found.message);
  t.ok(err instanceof Error);
  t.ok(isServiceError(err));
  t.notOk(isServiceError(new Error('x')));
  t.equal(new ServiceError('conflict', 'Custom text.').message, 'Custom text.');
});

t.test('errorEnvelope', async (t) => {
  const plain = JSON.parse(errorEnvelope(new ServiceError('queue_paused')));
  t.strictSame(plain, { error: { code: 'queue_paused', message: errorCatalog.queue_paused.message } }, 'no details key when none given');

  const details = [{ field: 'url', problem: 'scheme must be http or https' }];
  const withDetails = JSON.parse(errorEnvelope(new ServiceError('validation_failed', 'Bad url.', details)));
  t.strictSame(withDetails, { error: { code: 'validation_failed', message: 'Bad url.', details } });

  for (const code of Object.keys(errorCatalog) as ErrorCode[]) {
    const body = JSON.parse(errorEnvelope(new ServiceError(code)));
    t.strictSame(Object.keys(body), ['error'], `${code}: one top-level key`);
    t.equal(body.error.code, code);
    t.type(body.error.message, 'string');
  }
});
