/**
 * Why an attempt got no HTTP answer, or never left: the one table of
 * delivery failure codes, and what each one means for the delivery. Codes are
 * node's errno names where one exists (ECONNREFUSED…) and ours otherwise
 * (ESSRF, ENOKEY…); a code not in the table is a network failure.
 *
 * Every kind is retried on the target's schedule, up to its horizon, because
 * each can end without anyone touching the delivery: a receiver comes back, a
 * certificate is renewed, a DNS name moves, an operator adds the missing
 * signing key. None is retried forever: every failed attempt, whatever its
 * kind, extends the target's failure streak, and a target that has failed
 * continuously for `delivery.disableAfterFailingSeconds` (5 days) is disabled
 * with the reason recorded; its deliveries are then `blocked` instead of
 * attempted, until the target is enabled again (and what it missed
 * redelivered). A configuration failure also says so in the attempt's error,
 * so the target's last error points at the setting to fix, not the network.
 */

/** What went wrong, in the words the attempt record, metrics and target health use. */
export type FailureKind =
  /** No complete answer within the attempt's deadline. */
  | 'timeout'
  /** Refused, reset, unreachable, DNS: the receiver or the path to it is away. */
  | 'network'
  /** The receiver answered, but not in HTTP/1.1 we can read. */
  | 'protocol'
  /** The receiver's certificate was refused (expired, untrusted, wrong name). */
  | 'tls'
  /** The target's host resolves to an address delivery may not reach (the SSRF guard). */
  | 'refused-address'
  /** Ours to fix: a setting the attempt needs is missing or refused (signing key, OAuth client). */
  | 'configuration'
  /** The node is stopping: the attempt never left and is made again after the restart. */
  | 'shutdown';

export interface FailureRule {
  kind: FailureKind;
  /** Whether sending again can succeed without anyone changing the target (false: a setting must change first). */
  transient: boolean;
}

const RULES: Readonly<Record<string, FailureRule>> = {
  ETIMEDOUT: { kind: 'timeout', transient: true },
  ECONNREFUSED: { kind: 'network', transient: true },
  ECONNRESET: { kind: 'network', transient: true },
  EPIPE: { kind: 'network', transient: true },
  EHOSTUNREACH: { kind: 'network', transient: true },
  ENETUNREACH: { kind: 'network', transient: true },
  EADDRNOTAVAIL: { kind: 'network', transient: true },
  ENOTFOUND: { kind: 'network', transient: true },
  EAI_AGAIN: { kind: 'network', transient: true },
  EPROTO: { kind: 'protocol', transient: true },
  EREQUEST: { kind: 'protocol', transient: true },
  ESSRF: { kind: 'refused-address', transient: false },
  /** The queue signs deliveries but its workspace has no active signing key. */
  ENOKEY: { kind: 'configuration', transient: false },
  /** The queue's signing settings could not be read (the database is away). */
  ECONFIG: { kind: 'network', transient: true },
  /** The OAuth token endpoint refused the target's client or could not be reached. */
  ETOKEN: { kind: 'configuration', transient: false },
  ECLOSED: { kind: 'shutdown', transient: true },
};

const TLS_CODE = /^ERR_TLS_|CERT|SELF_SIGNED|UNABLE_TO_|ERR_SSL_|LEAF_SIGNATURE/;

/** The rule for a dispatch error code. */
export function dispatchFailure(code: string): FailureRule {
  return RULES[code] ?? (TLS_CODE.test(code) ? { kind: 'tls', transient: false } : { kind: 'network', transient: true });
}
