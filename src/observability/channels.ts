import diagnostics_channel from 'node:diagnostics_channel';
import type { EventRecord } from '../event-log/event-record.js';
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
  /** The dispatcher's error code when no response came (ETIMEDOUT, ESSRF, ECONNREFUSED…); null with a response. */
  errorCode: string | null;
  /**
   * What kind of failure that code is (delivery's failure table,
   * src/delivery/dispatch-failure.ts: timeout, network, refused-address, tls,
   * configuration…); null with a response. Carried here so observers classify
   * attempts without reaching back into delivery.
   */
  failureKind: string | null;
  reason: string | null;
  durationMs: number;
}

export const attemptChannel = diagnostics_channel.channel('streamgate:delivery:attempt');

/** What ingress made of a request, carried on its exchange to the answered message. */
export interface IngressOutcome {
  queue: { readonly tenantPublicId: string; readonly queueName: string } | null;
  bytes: number;
  appendMs: number;
  replayed: boolean;
}

/** An HTTP answer: the exchange itself (no copy per request); `route` is the registered pattern. */
export interface AnsweredMessage {
  readonly route: string;
  readonly method: string;
  readonly status: number;
  /** The error catalog code of an error answer; null otherwise. */
  readonly errorCode: string | null;
  /** What ingress did with the event (POST /events…): see Exchange.ingress. */
  readonly ingress: IngressOutcome;
}

/** One flush of the log writer: `records` in one produce request, `attempts` sends until settled. */
export interface ProduceMessage {
  records: number;
  attempts: number;
  ok: boolean;
}

/** One fetch answer of the log reader (Kafka): the records it handed over to the partition actors. */
export interface FetchMessage {
  records: number;
}

/** A Kafka request that failed: the broker's error codes (empty when no broker answered). */
export interface BrokerErrorMessage {
  operation: 'produce' | 'fetch';
  errorCodes: readonly string[];
  /** Produce only: the records go again (a produce retry). */
  retrying: boolean;
}

/** The consumer group gave this member a new assignment. */
export interface RebalanceMessage {
  partitions: number;
}

export const answeredChannel = diagnostics_channel.channel('streamgate:http:answered');
export const produceChannel = diagnostics_channel.channel('streamgate:log:produce');
export const fetchChannel = diagnostics_channel.channel('streamgate:log:fetch');
export const brokerErrorChannel = diagnostics_channel.channel('streamgate:log:broker-error');
export const rebalanceChannel = diagnostics_channel.channel('streamgate:log:rebalance');
/** A target was disabled by this node (410 Gone or a failure streak); the message is the target's public id. */
export const targetDisabledChannel = diagnostics_channel.channel('streamgate:delivery:target-disabled');
/** A Redis client reported an error; the message is the error's code or 'error'. */
export const redisErrorChannel = diagnostics_channel.channel('streamgate:cache:redis-error');
