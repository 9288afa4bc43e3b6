import { ServiceError } from '../errors.js';

/**
 * A path parameter as the name it stands for: percent-decoded, and refused as
 * 404 `not_found` when it cannot name anything (a malformed escape, or control
 * characters such as NUL, which Postgres text cannot even store).
 */
export function decodePathSegment(segment: string, notFoundMessage = 'No such resource.'): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    throw new ServiceError('not_found', notFoundMessage);
  }
  if (/[\u0000-\u001f\u007f]/.test(decoded)) throw new ServiceError('not_found', notFoundMessage);
  return decoded;
}
