/**
 * Whether a Redis failure at start is worth waiting out or a
 * misconfiguration that must stop the node. Redis answers a refused login
 * with an error reply whose first word is the error's code (WRONGPASS,
 * NOAUTH, NOPERM); a certificate Node refuses carries a TLS code. Anything
 * else (refused, reset, timed out, ioredis giving up on a command while it
 * reconnects) is the server being away.
 */
const REFUSED_LOGIN = new Set(['WRONGPASS', 'NOAUTH', 'NOPERM']);

export function isRetriableRedisError(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
  if (!e || typeof e !== 'object') return true;
  if (e.name === 'ReplyError' && typeof e.message === 'string' && REFUSED_LOGIN.has(e.message.split(' ', 1)[0]!)) return false;
  // node:tls verification codes (SELF_SIGNED_CERT_IN_CHAIN, UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_…, ERR_SSL_…).
  return !(typeof e.code === 'string' && /CERT|SSL|TLS|LEAF_SIGNATURE|ISSUER/.test(e.code));
}
