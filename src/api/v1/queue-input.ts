import { parseAllowlistEntry } from '../../auth/ip-allowlist.js';
import {
  AUTH_MODES,
  INGRESS_STATES,
  VALUE_SOURCES,
  withQueueDefaults,
  type QueueDefaults,
  type MappedHeader,
  type QueueSettings,
  type SourceRef,
} from '../../routing/queue-settings.js';
import { FieldReader } from '../json-body.js';

const FIELDS = [
  'authMode', 'ingress', 'archived', 'paymentsSecret', 'ipAllowlist', 'groupKeyRequired',
  'eventType', 'groupKey', 'partitionKey', 'mappedHeaders', 'outboundSigning',
  'paymentsSignatureRecalculation', 'hopBudget', 'dedupWindowSeconds',
] as const;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// docs/api.md#ingress.
const NEVER_FORWARDED = new Set([
  'idempotency-key', 'x-idempotency-key', 'x-delivery-key',
  'authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key',
  'host', 'content-type', 'content-length', 'connection', 'transfer-encoding', 'expect', 'upgrade', 'te',
]);

/** Why a header name can never be a mapped header, or null when it can. */
export function neverForwardedReason(name: string): string | null {
  const lower = name.toLowerCase();
  if (lower.startsWith('x-service-')) return "X-Service-* is the service's own vocabulary and cannot be forwarded";
  if (NEVER_FORWARDED.has(lower)) return `${name} can never be forwarded`;
  return null;
}

/** Reads and validates the body of `PUT /v1/tenants/{tenant}/queues/{name}` (docs/api.md#configuration-api). */
export function readQueueSettings(body: Record<string, unknown>): Partial<QueueSettings> {
  const r = new FieldReader(body, FIELDS);
  const out: Partial<QueueSettings> = {};
  const authMode = r.oneOf('authMode', AUTH_MODES);
  if (authMode) out.authMode = authMode;
  const ingress = r.oneOf('ingress', INGRESS_STATES);
  if (ingress) out.ingress = ingress;
  const archived = r.boolean('archived');
  if (archived !== undefined) out.archived = archived;
  const paymentsSecret = r.string('paymentsSecret', { max: 500 });
  if (paymentsSecret !== undefined) {
    if (paymentsSecret === '' || CONTROL.test(paymentsSecret)) r.problem('paymentsSecret', 'must be a non-empty string without control characters');
    else out.paymentsSecret = paymentsSecret;
  }
  const allowlist = r.stringList('ipAllowlist', { max: 100 });
  if (allowlist) {
    const bad = allowlist.filter((entry) => parseAllowlistEntry(entry) === null);
    if (bad.length > 0) r.problem('ipAllowlist', `${bad.map((b) => JSON.stringify(b)).join(', ')} is not an IP address or CIDR such as 203.0.113.0/24`);
    else out.ipAllowlist = allowlist.map((entry) => entry.trim());
  }
  const groupKeyRequired = r.boolean('groupKeyRequired');
  if (groupKeyRequired !== undefined) out.groupKeyRequired = groupKeyRequired;
  for (const field of ['eventType', 'groupKey', 'partitionKey'] as const) {
    if (!r.has(field)) continue;
    const ref = readSourceRef(r.raw(field));
    if (typeof ref === 'string') r.problem(field, ref);
    else out[field] = ref;
  }
  const outboundSigning = r.oneOf('outboundSigning', ['none', 'hmac', 'standard'] as const);
  if (outboundSigning) out.outboundSigning = outboundSigning;
  const recalc = r.boolean('paymentsSignatureRecalculation');
  if (recalc !== undefined) {
    if (recalc && out.authMode !== 'payments') r.problem('paymentsSignatureRecalculation', 'needs authMode payments: only verified payments events can be re-signed');
    out.paymentsSignatureRecalculation = recalc;
  }
  if (r.has('mappedHeaders')) {
    const mapped = readMappedHeaders(r.raw('mappedHeaders'), recalc === true);
    if (typeof mapped === 'string') r.problem('mappedHeaders', mapped);
    else if (Array.isArray(mapped)) out.mappedHeaders = mapped;
    else for (const p of mapped.problems) r.problem(p.field, p.problem);
  }
  const hopBudget = r.integer('hopBudget', 1, 100);
  if (hopBudget !== undefined) out.hopBudget = hopBudget;
  const dedup = r.integer('dedupWindowSeconds', 0, 30 * 86_400);
  if (dedup !== undefined) out.dedupWindowSeconds = dedup;
  r.done();
  return out;
}

/** A `{ source, name }` extraction source, or why it is not one. */
export function readSourceRef(v: unknown): SourceRef | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be an object { source: header|query|body, name }';
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => k !== 'source' && k !== 'name');
  if (extra.length > 0) return `has unknown field(s) ${extra.join(', ')}`;
  if (typeof o.source !== 'string' || !(VALUE_SOURCES as readonly string[]).includes(o.source)) return 'source must be one of header, query, body';
  const source = o.source as SourceRef['source'];
  if (typeof o.name !== 'string' || o.name.length === 0 || o.name.length > 200) return 'name must be a string of 1-200 characters';
  if (source === 'header' ? !HEADER_NAME.test(o.name) : CONTROL.test(o.name)) return `name ${JSON.stringify(o.name)} is not a valid ${source} name`;
  return { source, name: o.name };
}

/**
 * Mapped headers (docs/api.md#ingress): where each value is lifted from, the name it
 * is sent under, and whether an event without it is refused. Names that can
 * never be forwarded are refused, so are two mappings to one name (a
 * collision) and Payments-Signature while recalculation is on (rule 3).
 */
function readMappedHeaders(v: unknown, recalculation: boolean): MappedHeader[] | string | { problems: Array<{ field: string; problem: string }> } {
  if (!Array.isArray(v)) return 'must be a list of { from: { source, name }, as, required? }';
  if (v.length > 50) return 'must have at most 50 items';
  const out: MappedHeader[] = [];
  const problems: Array<{ field: string; problem: string }> = [];
  const seen = new Set<string>();
  v.forEach((item: unknown, i) => {
    const at = `mappedHeaders[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return problems.push({ field: at, problem: 'must be an object' });
    const o = item as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => !['from', 'as', 'required'].includes(k));
    if (extra.length > 0) return problems.push({ field: at, problem: `has unknown field(s) ${extra.join(', ')}` });
    const from = readSourceRef(o.from);
    if (typeof from === 'string') return problems.push({ field: `${at}.from`, problem: from });
    if (typeof o.as !== 'string' || !HEADER_NAME.test(o.as)) return problems.push({ field: `${at}.as`, problem: 'must be a header name' });
    const reason = neverForwardedReason(o.as);
    if (reason) return problems.push({ field: `${at}.as`, problem: reason });
    if (recalculation && o.as.toLowerCase() === 'payments-signature') {
      return problems.push({ field: `${at}.as`, problem: 'Payments-Signature is written by the signing step while paymentsSignatureRecalculation is on' });
    }
    if (seen.has(o.as.toLowerCase())) return problems.push({ field: `${at}.as`, problem: `collides with another mapped header named ${o.as}` });
    seen.add(o.as.toLowerCase());
    if (o.required !== undefined && typeof o.required !== 'boolean') return problems.push({ field: `${at}.required`, problem: 'must be true or false' });
    out.push({ from, as: o.as, required: o.required === true });
    return undefined;
  });
  return problems.length > 0 ? { problems } : out;
}

/**
 * A queue's settings as the API shows them: every setting with its default
 * (hopBudget and dedupWindowSeconds from the node's configuration, as ingress
 * applies them), the payments secret write-only (only whether one is set).
 */
export function queueSettingsView(stored: Partial<QueueSettings>, defaults: QueueDefaults): Omit<QueueSettings, 'paymentsSecret'> & { paymentsSecretSet: boolean } {
  const { paymentsSecret, ...rest } = withQueueDefaults(stored, defaults);
  return { ...rest, paymentsSecretSet: typeof paymentsSecret === 'string' && paymentsSecret.length > 0 };
}
