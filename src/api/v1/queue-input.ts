import Type, { type Static } from 'typebox';
import { parseAllowlistEntry } from '../../auth/ip-allowlist.js';
import { standardWebhooksKey } from '../../auth/source-signatures.js';
import { HEADER_NAME } from '../../routing/header-rules.js';
import {
  AUTH_MODES,
  INGRESS_STATES,
  SOURCE_AUTH_MODES,
  VALUE_SOURCES,
  isSourceAuthMode,
  withQueueDefaults,
  type QueueDefaults,
  type MappedHeader,
  type QueueSettings,
  type SourceRef,
} from '../../routing/queue-settings.js';
import { compileBody, registerFormat } from '../../schema/body-validator.js';
import { closed, int, maybe, oneOf, withProblem } from '../../schema/schema-kit.js';
import { checkBodyWithRules, type Problems } from '../json-body.js';

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** No C0, DEL or C1 control character (one or more characters). */
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f-\\u009f]+$';

registerFormat('ip-or-cidr', (entry) => parseAllowlistEntry(entry) !== null);

/** Where a value is read from in an incoming request: `{ source, name }`. */
export const SourceRefBody = closed(
  { source: oneOf(VALUE_SOURCES), name: Type.String({ minLength: 1, maxLength: 200 }) },
  { description: 'Where ingress reads a value: a header, a query parameter or a top-level field of a JSON body.' },
);

/** A value lifted from the request and sent to receivers as a header. */
const MappedHeaderBody = closed({
  from: SourceRefBody,
  as: withProblem(Type.String({ pattern: HEADER_NAME.source }), 'must be a header name'),
  required: Type.Optional(Type.Boolean()),
});

export const OUTBOUND_SIGNING = ['none', 'hmac', 'standard'] as const;

/** The body of `PUT /v1/tenants/{tenant}/queues/{name}`: every field optional (docs/api.md#configuration-api). */
export const QueueInput = closed(
  {
  authMode: maybe(oneOf(AUTH_MODES)),
  ingress: maybe(oneOf(INGRESS_STATES)),
  archived: maybe(Type.Boolean()),
  paymentsSecret: maybe(withProblem(Type.String({ maxLength: 500, pattern: NO_CONTROL }), 'must be a non-empty string without control characters')),
  sourceSecret: maybe(withProblem(
    Type.String({
      maxLength: 500,
      pattern: NO_CONTROL,
      description: 'Write-only. The secret the provider signs with, for authMode standard_webhooks (whsec_ + base64, as the provider gives it), '
        + 'github (the webhook secret) or shopify (the app\'s client secret). Answers show only sourceSecretSet.',
    }),
    'must be a non-empty string without control characters',
  )),
  ipAllowlist: maybe(
    Type.Array(withProblem(Type.String({ format: 'ip-or-cidr' }), 'is not an IP address or CIDR such as 203.0.113.0/24'), { maxItems: 100 }),
  ),
  groupKeyRequired: maybe(Type.Boolean()),
  eventType: Type.Optional(SourceRefBody),
  groupKey: Type.Optional(SourceRefBody),
  partitionKey: Type.Optional(SourceRefBody),
  mappedHeaders: Type.Optional(Type.Array(MappedHeaderBody, { maxItems: 50 })),
  outboundSigning: maybe(oneOf(OUTBOUND_SIGNING)),
  paymentsSignatureRecalculation: maybe(Type.Boolean()),
  hopBudget: maybe(int(1, 100)),
  dedupWindowSeconds: maybe(int(0, 30 * 86_400)),
  },
  { title: 'QueueInput', description: "A queue's settings; every field optional (null: not given)." },
);
export const checkQueueInput = compileBody(QueueInput);

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

/**
 * The settings a valid `PUT /v1/tenants/{tenant}/queues/{name}` body sets: the
 * schema first, then the rules between fields and names the schema cannot say.
 */
export function readQueueSettings(body: unknown): Partial<QueueSettings> {
  return checkBodyWithRules(body, checkQueueInput, queueSettingsOf);
}

function queueSettingsOf(input: Static<typeof QueueInput>, problems: Problems): Partial<QueueSettings> {
  const out: Partial<QueueSettings> = {};
  if (input.authMode != null) out.authMode = input.authMode;
  if (input.ingress != null) out.ingress = input.ingress;
  if (input.archived != null) out.archived = input.archived;
  if (input.paymentsSecret != null) out.paymentsSecret = input.paymentsSecret;
  if (input.sourceSecret != null) {
    const mode = out.authMode ?? 'api_key';
    if (!isSourceAuthMode(mode)) problems.add('sourceSecret', `needs authMode ${SOURCE_AUTH_MODES.join(', ')} in the same body: only those queues verify with a source secret`);
    else if (mode === 'standard_webhooks' && standardWebhooksKey(input.sourceSecret) === null) {
      problems.add('sourceSecret', 'must be whsec_ followed by the base64 of the key, as Standard Webhooks secrets are');
    } else out.sourceSecret = input.sourceSecret;
  }
  if (input.ipAllowlist != null) out.ipAllowlist = input.ipAllowlist.map((entry) => entry.trim());
  if (input.groupKeyRequired != null) out.groupKeyRequired = input.groupKeyRequired;
  for (const field of ['eventType', 'groupKey', 'partitionKey'] as const) {
    const ref = input[field];
    if (ref === undefined) continue;
    const problem = sourceRefProblem(ref);
    if (problem) problems.add(`${field}.name`, problem);
    else out[field] = ref;
  }
  if (input.outboundSigning != null) out.outboundSigning = input.outboundSigning;
  const recalc = input.paymentsSignatureRecalculation;
  if (recalc != null) {
    if (recalc && out.authMode !== 'payments') problems.add('paymentsSignatureRecalculation', 'needs authMode payments: only verified payments events can be re-signed');
    out.paymentsSignatureRecalculation = recalc;
  }
  if (input.mappedHeaders !== undefined) {
    const mapped = mappedHeaders(input.mappedHeaders, recalc === true, problems);
    if (mapped) out.mappedHeaders = mapped;
  }
  if (input.hopBudget != null) out.hopBudget = input.hopBudget;
  if (input.dedupWindowSeconds != null) out.dedupWindowSeconds = input.dedupWindowSeconds;
  return out;
}

/** Why a schema-valid source cannot name a value (a header name must be a token; no control characters), or null. */
export function sourceRefProblem(ref: Static<typeof SourceRefBody>): string | null {
  const ok = ref.source === 'header' ? HEADER_NAME.test(ref.name) : !CONTROL.test(ref.name);
  return ok ? null : `${JSON.stringify(ref.name)} is not a valid ${ref.source} name`;
}

/**
 * Mapped headers (docs/api.md#ingress): where each value is lifted from, the name it
 * is sent under, and whether an event without it is refused. Names that can
 * never be forwarded are refused, so are two mappings to one name (a
 * collision) and Payments-Signature while recalculation is on (rule 3).
 */
function mappedHeaders(list: ReadonlyArray<Static<typeof MappedHeaderBody>>, recalculation: boolean, problems: Problems): MappedHeader[] | null {
  const out: MappedHeader[] = [];
  const seen = new Set<string>();
  const before = problems.list.length;
  list.forEach((item, i) => {
    const at = `mappedHeaders[${i}]`;
    const fromProblem = sourceRefProblem(item.from);
    if (fromProblem) return problems.add(`${at}.from.name`, fromProblem);
    const reason = neverForwardedReason(item.as);
    if (reason) return problems.add(`${at}.as`, reason);
    if (recalculation && item.as.toLowerCase() === 'payments-signature') {
      return problems.add(`${at}.as`, 'Payments-Signature is written by the signing step while paymentsSignatureRecalculation is on');
    }
    if (seen.has(item.as.toLowerCase())) return problems.add(`${at}.as`, `collides with another mapped header named ${item.as}`);
    seen.add(item.as.toLowerCase());
    out.push({ from: item.from as SourceRef, as: item.as, required: item.required === true });
  });
  return problems.list.length === before ? out : null;
}

/**
 * A queue's settings as the API shows them: every setting with its default
 * (hopBudget and dedupWindowSeconds from the node's configuration, as ingress
 * applies them), the payments and source secrets write-only (only whether one is set).
 */
export function queueSettingsView(
  stored: Partial<QueueSettings>,
  defaults: QueueDefaults,
): Omit<QueueSettings, 'paymentsSecret' | 'sourceSecret'> & { paymentsSecretSet: boolean; sourceSecretSet: boolean } {
  const { paymentsSecret, sourceSecret, ...rest } = withQueueDefaults(stored, defaults);
  return {
    ...rest,
    paymentsSecretSet: typeof paymentsSecret === 'string' && paymentsSecret.length > 0,
    sourceSecretSet: typeof sourceSecret === 'string' && sourceSecret.length > 0,
  };
}
