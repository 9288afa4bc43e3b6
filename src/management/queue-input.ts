import { INGRESS_STATES, type QueueSettings } from '../routing/queue-settings.js';
import { FieldReader } from './json-body.js';

/** Reads and validates the body of `PUT /v1/tenants/{tenant}/queues/{name}` (contract §4). */
export function readQueueSettings(body: Record<string, unknown>): Partial<QueueSettings> {
  const r = new FieldReader(body, ['authMode', 'ingress', 'archived', 'groupKeyRequired', 'hopBudget', 'dedupWindowSeconds']);
  const out: Partial<QueueSettings> = {};
  // Signed-request and payments modes are accepted once ingress verifies them.
  const authMode = r.oneOf('authMode', ['api_key'] as const);
  if (authMode) out.authMode = authMode;
  const ingress = r.oneOf('ingress', INGRESS_STATES);
  if (ingress) out.ingress = ingress;
  const archived = r.boolean('archived');
  if (archived !== undefined) out.archived = archived;
  const groupKeyRequired = r.boolean('groupKeyRequired');
  if (groupKeyRequired !== undefined) out.groupKeyRequired = groupKeyRequired;
  const hopBudget = r.integer('hopBudget', 1, 100);
  if (hopBudget !== undefined) out.hopBudget = hopBudget;
  const dedup = r.integer('dedupWindowSeconds', 0, 30 * 86_400);
  if (dedup !== undefined) out.dedupWindowSeconds = dedup;
  r.done();
  return out;
}
