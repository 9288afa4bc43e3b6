import diagnostics_channel from 'node:diagnostics_channel';
import type { EventRecord } from '../log/event-record.js';
import type { RouteTarget } from '../routing/route-table.js';

/**
 * The data path publishes what happens here; logging and metrics subscribe.
 * Publishing to a channel without subscribers costs next to nothing, so the
 * hot path carries no logging calls of its own.
 */
export interface AttemptMessage {
  /** The event and the target of the attempt (references, not copies: read, don't keep). */
  record: EventRecord;
  target: RouteTarget;
  eventId: string;
  targetPublicId: string;
  attempt: number;
  outcome: 'delivered' | 'retry' | 'failed';
  status: number | null;
  reason: string | null;
  durationMs: number;
}

export interface AcceptedMessage {
  eventId: string;
  tenantPublicId: string;
  queueName: string;
  bytes: number;
}

export const attemptChannel = diagnostics_channel.channel('streamgate:delivery:attempt');
export const acceptedChannel = diagnostics_channel.channel('streamgate:ingress:accepted');
