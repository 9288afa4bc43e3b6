import { ServiceError } from '../errors.js';

/**
 * X-Service-Path loop prevention (docs/api.md#configuration-api): the header lists the hops an
 * event has passed, comma-separated. A chain holding the receiving queue's own
 * segment is a cycle; one with more segments than the hop budget is too long.
 */
export function checkHopPath(header: string | undefined, ownSegment: string, hopBudget: number): string | null {
  if (header === undefined || header.trim() === '') return null;
  const segments = header.split(',').map((s) => s.trim()).filter(Boolean);
  if (segments.includes(ownSegment)) throw new ServiceError('loop_detected');
  if (segments.length > hopBudget) {
    throw new ServiceError('max_hops_exceeded', `The X-Service-Path chain has ${segments.length} hops; the budget is ${hopBudget}.`);
  }
  return segments.join(',');
}
