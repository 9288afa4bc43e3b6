import { isSourceAuthMode, withQueueDefaults, type QueueSettings } from '../../routing/queue-settings.js';

export type QueueState = 'accepting' | 'closed' | 'archived' | 'paused';

/**
 * A queue's state as the console shows it (docs/api.md#resources-and-states): `archived`
 * (the queue or its workspace; 409 queue_archived) wins, then `paused` (the
 * auth mode has nothing to verify with; 409 queue_paused, with the reason),
 * then `closed` (ingress closed; 409 ingress_closed), else `accepting`.
 * Ingress checks the mode before the archive flag, but an archived queue takes
 * nothing until restored whatever its mode, so archived is what it is.
 */
export function queueState(
  stored: Partial<QueueSettings>,
  facts: { workspaceArchived: boolean; activeSigningKeys: number },
): { state: QueueState; pausedReason: string | null } {
  const s = withQueueDefaults(stored);
  if (s.archived || facts.workspaceArchived) return { state: 'archived', pausedReason: null };
  if (s.authMode === 'signed_request' && facts.activeSigningKeys === 0) {
    return { state: 'paused', pausedReason: 'The queue takes signed requests and its workspace has no active signing key.' };
  }
  if (s.authMode === 'payments' && !s.paymentsSecret) {
    return { state: 'paused', pausedReason: 'The payments queue has no payments secret configured.' };
  }
  if (isSourceAuthMode(s.authMode) && !s.sourceSecret) {
    return { state: 'paused', pausedReason: `The ${s.authMode} queue has no source secret configured.` };
  }
  if (s.ingress === 'closed') return { state: 'closed', pausedReason: null };
  return { state: 'accepting', pausedReason: null };
}
