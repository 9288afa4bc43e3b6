import { randomBytes } from 'node:crypto';

/**
 * X-Request-Id: the caller's own id when it is sane (1 to 64 characters of
 * `A-Z a-z 0-9 . _ : / + = @ -`: nothing a log line, a header or a shell could
 * misread, no CR/LF to split a response with), else one made here.
 *
 * Made ids are a per-process random prefix and a counter (`<prefix>-<n base36>`):
 * unique across a cluster in practice, and a string concatenation per request
 * on the ingress hot path instead of random bytes.
 */
const SANE = /^[A-Za-z0-9._:/+=@-]{1,64}$/;
const PREFIX = randomBytes(6).toString('base64url');
let counter = 0;

export function requestIdOf(offered: string | undefined): string {
  if (offered !== undefined && SANE.test(offered)) return offered;
  return `${PREFIX}-${(++counter).toString(36)}`;
}
