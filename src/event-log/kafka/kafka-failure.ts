import { TimeoutError } from '@platformatic/kafka';
import type { Config } from '../../config/schema.js';
import { childrenOf, errorChain } from '../../util/error-chain.js';

/**
 * One line for an operator out of what @platformatic/kafka throws when it
 * cannot connect. The library nests the real cause several levels deep:
 *
 *   MultipleErrors "metadata failed 2 times."          (retries; .errors)
 *   └ MultipleErrors "Cannot connect to any broker."    (one per broker; .errors)
 *     └ NetworkError "Connection to HOST:PORT failed."  (.cause)
 *       ├ AuthenticationError → ResponseError → ProtocolError SASL_AUTHENTICATION_FAILED
 *       ├ Error SELF_SIGNED_CERT_IN_CHAIN / ERR_TLS_CERT_ALTNAME_INVALID / ...  (node:tls)
 *       ├ UserError "TLS handshake failed" → Error ECONNRESET                  (TLS to a plain port)
 *       └ Error ECONNREFUSED / ENOTFOUND / ...                                 (node:net)
 *
 * Every root-to-leaf path is read for its broker and its cause; paths with the
 * same cause are merged. Decisions go by error codes, protocol ids and classes;
 * the only texts read are the broker address in the NetworkError's message,
 * which the library does not keep anywhere else, and the UserError that 2.x
 * raises when a plain-text connection reads TLS back (no code of its own).
 */

type Settings = Readonly<Pick<Config['kafka'], 'ssl' | 'sasl'>>;

/** Raised at boot when no broker could be reached; the message is explainKafkaFailure's line. */
export class KafkaUnavailableError extends Error {
  override readonly name = 'KafkaUnavailableError';
}

/** Thrown into the library (which wraps it) when the OAUTHBEARER token provider fails or returns no token. */
export class KafkaTokenProviderError extends Error {
  override readonly name = 'KafkaTokenProviderError';
}

/**
 * E.g. `Kafka broker 127.0.0.1:9093: SASL authentication failed (SCRAM-SHA-256,
 * user "streamgate"): wrong username or password`. `brokers` names the
 * brokers when the error does not; `settings` adds the mechanism and user
 * (never the password) and hints that depend on the TLS setting.
 */
export function explainKafkaFailure(err: unknown, brokers: readonly string[], settings?: Settings): string {
  const byReason = new Map<string, Set<string>>();
  for (const path of paths(err)) {
    const reason = reasonOf(path, settings);
    const broker = brokerOf(path) ?? brokers.join(', ');
    let set = byReason.get(reason);
    if (!set) byReason.set(reason, (set = new Set()));
    set.add(broker);
  }
  const parts = [...byReason].map(([reason, set]) => {
    const names = [...set].join(', ');
    const plural = set.size > 1 || names.includes(',');
    return `Kafka broker${plural ? 's' : ''} ${names}: ${reason}`;
  });
  return parts.join('; ');
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  apiId?: unknown;
  tokenStatus?: unknown;
  reason?: unknown;
}

const asError = (e: unknown): ErrorLike | null => (typeof e === 'object' && e !== null ? (e as ErrorLike) : null);

/** Every chain from `err` down to an error without cause or children. */
function paths(err: unknown, prefix: ErrorLike[] = [], depth = 0): ErrorLike[][] {
  const e = asError(err);
  if (!e) return [[...prefix, { message: String(err) }]];
  const chain = [...prefix, e];
  const children = childrenOf(e);
  if (children.length === 0 || depth > 10) return [chain];
  return children.flatMap((child) => paths(child, chain, depth + 1));
}

/** HOST:PORT of the innermost "Connection to HOST:PORT failed/timed out." on the path. */
function brokerOf(path: ErrorLike[]): string | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const m = typeof path[i]!.message === 'string' ? /^Connection to (\S+:\d+) (?:failed|timed out)\.$/.exec(path[i]!.message as string) : null;
    if (m) return m[1];
  }
  return undefined;
}

/** node:tls verification codes: the broker's certificate does not chain to a trusted CA. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
/** A TLS client met a listener that does not speak TLS. */
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'ERR_SSL_HTTP_REQUEST']);
/** The broker's TLS alerts about our client certificate. */
const CLIENT_CERT_REFUSED = new Set([
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
]);
const NET: Record<string, string> = {
  ECONNREFUSED: 'connection refused (nothing listens on that port)',
  ENOTFOUND: 'host name not found (DNS)',
  EAI_AGAIN: 'host name lookup failed (DNS temporarily unavailable)',
  ETIMEDOUT: 'no answer from the host (timed out)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

function reasonOf(path: ErrorLike[], settings?: Settings): string {
  const codes = path.map((e) => (typeof e.code === 'string' ? e.code : ''));
  const has = (set: ReadonlySet<string>) => codes.find((c) => set.has(c));
  const leaf = path[path.length - 1]!;
  const sasl = settings?.sasl;
  const who = sasl && sasl.mechanism !== '' ? ` (${sasl.mechanism}${sasl.mechanism === 'OAUTHBEARER' ? '' : `, user ${JSON.stringify(sasl.username)}`})` : '';

  if (path.some((e) => e.apiId === 'SASL_AUTHENTICATION_FAILED')) return `SASL authentication failed${who}: wrong username or password`;
  const refused = path.find((e) => e.tokenStatus !== undefined);
  if (refused) return `SASL authentication failed${who}: the broker refused the token (${String(refused.tokenStatus)})`;
  const provider = path.find((e) => e instanceof KafkaTokenProviderError);
  if (provider) return `SASL authentication failed${who}: ${String(provider.message)}`;
  if (path.some((e) => e.apiId === 'UNSUPPORTED_SASL_MECHANISM')) {
    return `SASL mechanism ${sasl?.mechanism || '(configured)'} is not enabled on this listener`;
  }
  if (path.some((e) => e.apiId === 'ILLEGAL_SASL_STATE')) {
    return 'the broker expects SASL authentication first (set kafka.sasl.mechanism for this listener)';
  }

  const untrusted = has(UNTRUSTED);
  if (untrusted) {
    return `TLS: the broker's certificate is not signed by a trusted CA (${untrusted}; kafka.ssl.caFile ${settings?.ssl.caFile ? `is ${settings.ssl.caFile}` : 'is not set'})`;
  }
  const expired = has(EXPIRED);
  if (expired) return `TLS: the broker's certificate is not valid now (${expired})`;
  if (codes.includes('ERR_TLS_CERT_ALTNAME_INVALID')) {
    const detail = path.find((e) => e.code === 'ERR_TLS_CERT_ALTNAME_INVALID')!.reason;
    return `TLS: the broker's certificate does not match the server name (${typeof detail === 'string' ? detail : 'ERR_TLS_CERT_ALTNAME_INVALID'}; see kafka.ssl.serverName)`;
  }
  const clientCert = has(CLIENT_CERT_REFUSED);
  if (clientCert) return `TLS: the broker refused our client certificate or wants one (${clientCert}; see kafka.ssl.certFile)`;
  // The library marks "socket reset before the TLS handshake finished" as a UserError.
  if (has(NOT_TLS) || (codes.includes('PLT_KFK_USER') && codes.includes('ECONNRESET'))) {
    return 'TLS handshake failed: the port does not speak TLS (a PLAINTEXT listener? check the port or set kafka.ssl.enabled false)';
  }
  const tlsCode = codes.find((c) => c.startsWith('ERR_SSL_') || c.startsWith('ERR_TLS_'));
  if (tlsCode) return `TLS handshake failed (${tlsCode})`;

  const net = codes.find((c) => c in NET);
  if (net) return NET[net]!;
  if (path.some((e) => e instanceof TimeoutError)) {
    return `no answer within the connect timeout${settings && !settings.ssl.enabled ? ' (a TLS listener reached without kafka.ssl.enabled?)' : ''}`;
  }
  // 2.x: a plain-text client that reads a TLS record back fails its requests with this UserError.
  if (path.some((e) => e.code === 'PLT_KFK_USER' && e.message === 'Broker requires TLS.')) {
    return 'the broker answered in TLS: this listener needs kafka.ssl.enabled';
  }
  if (leaf.code === 'PLT_KFK_NETWORK' && leaf.cause === undefined) {
    // A TLS (or SASL) listener closes a plain-text client's connection without a word.
    return settings && !settings.ssl.enabled
      ? 'the broker closed the connection without answering (a TLS listener? set kafka.ssl.enabled)'
      : 'the broker closed the connection without answering';
  }
  return typeof leaf.message === 'string' && leaf.message !== '' ? leaf.message : String(leaf.code ?? 'unknown error');
}

/*
 * Questions the adapters ask of any failure (not only connect failures): the
 * protocol error names in it, whether sending again can help, and one short
 * line for logs. Same tree as above: MultipleErrors per attempt or broker,
 * ResponseError per failed partition, `cause` links.
 */
export interface KafkaErrorNode {
  message?: string;
  code?: string;
  apiId?: string;
  canRetry?: boolean;
  errors?: unknown[];
  cause?: unknown;
}

/** Every error in a failure's tree, depth first, attempts in the order they failed. */
export function walk(err: unknown): Generator<KafkaErrorNode> {
  return errorChain<KafkaErrorNode>(err);
}

/**
 * The library answers a metadata request for a topic the broker does not know
 * with a UserError "Unknown topic X." and drops the protocol error (1.35): it
 * is that protocol error all the same, and as transient (another node may be
 * creating the topic).
 */
function unknownTopic(node: KafkaErrorNode): boolean {
  return node.code === 'PLT_KFK_USER' && typeof node.message === 'string' && node.message.startsWith('Unknown topic ');
}

/** The Kafka protocol error names in a failure (e.g. MESSAGE_TOO_LARGE), without repeats. */
export function kafkaErrorIds(err: unknown): string[] {
  const ids = new Set<string>();
  for (const node of walk(err)) {
    if (typeof node.apiId === 'string') ids.add(node.apiId);
    else if (unknownTopic(node)) ids.add('UNKNOWN_TOPIC_OR_PARTITION');
  }
  return [...ids];
}

/**
 * Worth sending again: the connection or the broker's state failed (network,
 * timeout, leader moved, topic still being created), not the request itself.
 * A protocol error the protocol calls final (MESSAGE_TOO_LARGE, authorization,
 * invalid record...), a refused login or a misuse of the client is not.
 */
export function isRetriableKafkaError(err: unknown): boolean {
  for (const node of walk(err)) {
    if (typeof node.apiId === 'string' && node.canRetry === false) return false;
    if (node.code === 'PLT_KFK_AUTHENTICATION' || (node.code === 'PLT_KFK_USER' && !unknownTopic(node))) return false;
    // A certificate the client refuses, or TLS against a plain port, stays so: say it now, do not retry for a minute.
    if (typeof node.code === 'string' && /CERT|SSL|TLS/.test(node.code)) return false;
  }
  return true;
}

/** One line for logs and 503 messages: the protocol error names, else the innermost messages. */
export function kafkaErrorText(err: unknown): string {
  const ids = kafkaErrorIds(err);
  if (ids.length > 0) return ids.join(', ');
  const messages: string[] = [];
  for (const node of walk(err)) {
    if (typeof node.message === 'string' && node.message && !Array.isArray(node.errors) && !messages.includes(node.message)) messages.push(node.message);
  }
  if (messages.length > 0) return messages.slice(0, 3).join('; ');
  return err instanceof Error ? err.message : String(err);
}
