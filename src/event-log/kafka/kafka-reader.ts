import { setTimeout as sleep } from 'node:timers/promises';
import { Consumer, ListOffsetTimestamps, type ConsumerGroupJoinPayload } from '@platformatic/kafka';
import { withinMs } from '../../util/within-ms.js';
import { backoffDelay } from '../../util/backoff.js';
import { closeClient, isControlBatch, KAFKA_BACKOFF, kafkaClientOptions, type FetchRequestTopic, type FetchResponse, type KafkaSecurity } from './kafka-options.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../observability/logger.js';
import type { EventLogReader, GroupMembership, LogEntry, PartitionHandler, PartitionLag } from '../event-log.js';
import { brokerErrorChannel, fetchChannel, rebalanceChannel, type BrokerErrorMessage, type FetchMessage } from '../../observability/channels.js';
import { decodeEvent } from '../event-record.js';
import type { GroupLiveness } from './group-liveness.js';
import { isRetriableKafkaError, kafkaErrorIds, kafkaErrorText } from './kafka-failure.js';

/** A partition this member owns: where it reads next, and whether its actor still holds the last entries. */
interface Owned {
  handler: PartitionHandler;
  /** Next offset to fetch; null until the committed offset is loaded. */
  position: bigint | null;
  busy: boolean;
  /** The log's end as the last fetch answer gave it, and the group's committed offset (for the lag gauge). */
  highWatermark: bigint | null;
  committed: bigint | null;
}

const FETCH_WAIT_MS = 100;
const MAX_BYTES_PER_PARTITION = 1024 * 1024;
/** Read-uncommitted: we never write transactionally, and it spares the broker the stable-offset wait. */
const READ_UNCOMMITTED = 0;

/**
 * Consumes the event topic as one member of the cluster's consumer group,
 * on @platformatic/kafka: the library keeps the membership (join, sync,
 * heartbeats, rejoin on rebalance) and we run the fetch loop ourselves, so
 * that a partition whose actor is busy is simply left out of the next fetch
 * while the others go on (per-partition backpressure), and a broker that
 * stops answering only makes the loop wait and ask again: nothing is torn down
 * and nothing re-read that the actors already hold.
 *
 * Offsets: we fetch from where we handed the last entries over, but commit
 * only what the actor reports finished. After a crash or a move the group
 * resumes from the committed offset and replays what was in flight: at least
 * once, never lost. A rebalance that leaves a partition with us keeps its
 * actor and position (no replay); a partition we lose is revoked at once and
 * its commits are no longer sent (they would overwrite the new owner's).
 */
export class KafkaReader implements EventLogReader {
  private readonly consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  private readonly owned = new Map<number, Owned>();
  private handlerFor: ((partition: number) => PartitionHandler) | null = null;
  private running = false;
  private paused = false;
  private loop: Promise<void> | null = null;
  /** Wakes the fetch loop when it waits for a partition to become free or assigned. */
  private wake: (() => void) | null = null;
  /** Bumped on each assignment: fetch answers from before it are dropped. */
  private generation = 0;
  private readonly topic: string;
  private readonly sessionTimeoutMs: number;
  private readonly heartbeatIntervalMs: number;
  /** When the group coordinator last answered us (join or heartbeat), epoch ms; 0 before the first join. */
  private lastContact = 0;
  /** The last group failure (join or heartbeat) since the coordinator last answered; null when none. */
  private groupError: string | null = null;
  /** The join loop running, if any. */
  private joining: Promise<void> | null = null;

  private readonly log: Logger;
  private readonly liveness: GroupLiveness | null;
  constructor(
    settings: Readonly<Config['kafka']>,
    log: Logger,
    security: KafkaSecurity = {},
    /** Shared-cache marks that let the others take over at once when this node dies (group-liveness.ts). */
    liveness: GroupLiveness | null = null,
  ) {
    this.log = log;
    this.liveness = liveness;
    this.topic = settings.topic;
    this.sessionTimeoutMs = settings.sessionTimeoutMs;
    this.heartbeatIntervalMs = settings.heartbeatIntervalMs;
    this.consumer = new Consumer({
      ...kafkaClientOptions(settings, security, 3),
      groupId: settings.groupId,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
      rebalanceTimeout: Math.max(settings.sessionTimeoutMs * 2, 20_000),
      // The client arms a (ref'd) stall timer when a rejoin fails, also when close() failed it
      // after clearing the last one (2.12.1): with the default window, the rebalance timeout, a
      // node stopped mid-rebalance kept its process alive 20 s. Nothing here listens for the
      // stall event (membership comes from heartbeats and our join loop), so one heartbeat
      // interval bounds that wait instead.
      heartbeatStallTimeout: settings.heartbeatIntervalMs,
      autocommit: false,
      maxWaitTime: FETCH_WAIT_MS,
      isolationLevel: READ_UNCOMMITTED,
    });
    this.consumer.on('consumer:group:join', (payload) => this.assigned(payload));
    // Membership for readiness: the coordinator answering heartbeats is what keeps us in the group.
    this.consumer.on('consumer:heartbeat:end', () => this.contact());
    this.consumer.on('consumer:heartbeat:error', (payload) => {
      this.groupError = kafkaErrorText(payload.error);
      // 2.x schedules the next heartbeat itself after a failure that is not about the group (1.35
      // stopped heartbeating there). Should membership end anyway, the coordinator would drop us
      // at the session timeout: join again ourselves.
      if (this.running && !this.consumer.isActive()) void this.join();
    });
    // A rejoin the library gave up on: join again ourselves (the loop keeps the partitions meanwhile).
    this.consumer.on('error', (err: unknown) => {
      if (!this.running) return;
      this.groupError = kafkaErrorText(err);
      this.log.warn({ err, reason: this.groupError }, 'consumer group membership lost; joining again');
      void this.join();
    });
  }

  async start(handlerFor: (partition: number) => PartitionHandler): Promise<void> {
    this.handlerFor = handlerFor;
    this.running = true;
    this.consumer.topics.track(this.topic);
    try {
      await this.consumer.joinGroup({});
    } catch (err) {
      // Stopped while joining: not a failed start.
      if (!this.running) return;
      // A refused login or certificate stops the start; a broker away is waited out (readiness says so).
      if (!isRetriableKafkaError(err)) {
        this.running = false;
        await closeClient(this.consumer);
        throw err;
      }
      this.groupError = kafkaErrorText(err);
      this.log.warn({ err: this.groupError }, 'joining the consumer group failed; retrying');
      void this.join();
    }
    this.loop = this.fetchLoop();
  }

  membership(): GroupMembership {
    const joined = this.running && this.groupError === null && this.consumer.isActive() && Date.now() - this.lastContact < this.sessionTimeoutMs;
    if (joined) return { joined, partitions: this.owned.size };
    const error = !this.running ? 'not consuming' : (this.groupError ?? (this.lastContact === 0 ? 'not joined yet' : 'no answer from the group coordinator'));
    return { joined, partitions: this.owned.size, error };
  }

  private contact(): void {
    this.lastContact = Date.now();
    this.groupError = null;
  }

  /** Joins the group until it works or the reader stops (broker away: keep trying); one loop at a time. */
  private join(): Promise<void> {
    this.joining ??= this.joinLoop().finally(() => (this.joining = null));
    return this.joining;
  }

  private async joinLoop(): Promise<void> {
    for (let failures = 0; this.running; failures++) {
      try {
        await this.consumer.joinGroup({});
        return;
      } catch (err) {
        this.log.debug({ err: kafkaErrorText(err) }, 'joining the consumer group failed; retrying');
      }
      await sleep(backoffDelay(failures, KAFKA_BACKOFF));
    }
  }

  private assigned(payload: ConsumerGroupJoinPayload): void {
    // A join that completes after stop(): the partitions are no longer ours to start.
    if (!this.running) return;
    this.generation++;
    this.contact();
    this.liveness?.joined(payload.memberId);
    const mine = new Set(payload.assignments?.find((a) => a.topic === this.topic)?.partitions ?? []);
    const revoked: number[] = [];
    for (const [partition, state] of this.owned) {
      if (!mine.has(partition)) {
        state.handler.revoke();
        this.owned.delete(partition);
        revoked.push(partition);
      }
    }
    const added = [...mine].filter((p) => !this.owned.has(p)).sort((a, b) => a - b);
    for (const partition of added) this.owned.set(partition, { handler: this.handlerFor!(partition), position: null, busy: false, highWatermark: null, committed: null });
    if (rebalanceChannel.hasSubscribers) rebalanceChannel.publish({ partitions: mine.size });
    // Routine: a member joined or left. Not an error.
    this.log.info({ partitions: [...mine].sort((a, b) => a - b), added, revoked, generation: payload.generationId }, 'partitions assigned');
    this.wakeLoop();
  }

  private wakeLoop(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async fetchLoop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      try {
        const progressed = await this.fetchRound();
        if (failures > 0) this.log.info({ failures }, 'Kafka answers again; consuming');
        failures = 0;
        if (!progressed) await this.idle();
      } catch (err) {
        // Stopped: a fetch that stop() cut by closing the client is not a failure to report.
        if (!this.running) break;
        failures++;
        if (brokerErrorChannel.hasSubscribers) brokerErrorChannel.publish({ operation: 'fetch', errorCodes: kafkaErrorIds(err), retrying: true } satisfies BrokerErrorMessage);
        this.log[failures === 1 ? 'warn' : 'debug']({ err, reason: kafkaErrorText(err), failures }, 'fetching from Kafka failed; retrying');
        this.consumer.clearMetadata();
        await sleep(backoffDelay(failures - 1, KAFKA_BACKOFF));
      }
    }
  }

  /** Waits until a partition frees up or the assignment changes (at most a fetch wait). */
  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, FETCH_WAIT_MS);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * One fetch per leader broker for every owned partition that is free;
   * returns false when there was nothing to ask for.
   */
  private async fetchRound(): Promise<boolean> {
    if (this.paused) return false;
    const generation = this.generation;
    await this.loadPositions();
    const free = [...this.owned].filter(([, s]) => !s.busy && s.position !== null);
    if (free.length === 0) return false;
    const metadata = await this.consumer.metadata({ topics: [this.topic] });
    const layout = metadata.topics.get(this.topic);
    if (!layout) throw new Error(`topic ${this.topic} is not in the cluster metadata`);
    const byLeader = new Map<number, FetchRequestTopic>();
    for (const [partition, state] of free) {
      const leader = layout.partitions[partition]?.leader ?? -1;
      if (leader < 0) continue;
      let request = byLeader.get(leader);
      if (!request) byLeader.set(leader, (request = { topicId: layout.id, partitions: [] }));
      request.partitions.push({ partition, fetchOffset: state.position!, partitionMaxBytes: MAX_BYTES_PER_PARTITION, currentLeaderEpoch: -1, lastFetchedEpoch: -1 });
    }
    if (byLeader.size === 0) throw new Error(`no leader known for the free partitions of ${this.topic}`);
    // The first byte answers: a fetch that waited for more while records flow
    // (~5 ms of them at the current rate) made answers 2.7x larger for a CPU per
    // event within the noise (96 %, 94-109 %) and +6 ms of median accept->deliver
    // (bench/results/cpu-ab.md, 2026-11-27 16:23 and 16:27): a fetch round is not where the time goes.
    const answers = await Promise.allSettled(
      [...byLeader].map(([node, request]) =>
        this.consumer.fetch({ node, topics: [request], maxWaitTime: FETCH_WAIT_MS, minBytes: 1, maxBytes: MAX_BYTES_PER_PARTITION * request.partitions.length, isolationLevel: READ_UNCOMMITTED }),
      ),
    );
    let failure: unknown = null;
    for (const answer of answers) {
      if (answer.status === 'rejected') failure = answer.reason;
      // A fetch waits up to FETCH_WAIT_MS for records: one that comes back after
      // pause() (a drain) is dropped without moving the positions, so nothing new
      // reaches an actor once paused; those records stay uncommitted for the next owner.
      else if (generation === this.generation && !this.paused) this.handOver(answer.value);
    }
    if (failure) await this.recover(failure);
    return true;
  }

  /** Gives each partition's new records to its actor, in order, and moves its position past them. */
  private handOver(response: FetchResponse): void {
    let records = 0;
    for (const topic of response.responses) {
      for (const part of topic.partitions) {
        const state = this.owned.get(part.partitionIndex);
        if (state && part.highWatermark >= 0n) state.highWatermark = part.highWatermark;
        if (!state || state.position === null || !part.records) continue;
        const entries: LogEntry[] = [];
        let next = state.position;
        for (const batch of part.records) {
          if (isControlBatch(batch)) {
            const last = batch.firstOffset + BigInt(batch.lastOffsetDelta);
            if (last >= next) next = last + 1n;
            continue;
          }
          for (const record of batch.records) {
            const offset = batch.firstOffset + BigInt(record.offsetDelta);
            // A batch starts before the offset asked for when it was written in one piece.
            if (offset < next) continue;
            entries.push(toEntry(part.partitionIndex, offset, record.value));
            next = offset + 1n;
          }
        }
        state.position = next;
        records += entries.length;
        if (entries.length > 0) this.deliver(part.partitionIndex, state, entries);
      }
    }
    if (records > 0 && fetchChannel.hasSubscribers) fetchChannel.publish({ records } satisfies FetchMessage);
  }

  private deliver(partition: number, state: Owned, entries: LogEntry[]): void {
    state.busy = true;
    // The library heartbeats on its own timer: nothing to do while an actor waits.
    state.handler
      .deliver(entries, async () => {})
      .catch((err: unknown) => this.log.error({ err, partition }, 'a partition actor failed to take entries'))
      .finally(() => {
        state.busy = false;
        this.wakeLoop();
      });
  }

  /**
   * A fetch failed. The retention deleted where a partition stood
   * (OFFSET_OUT_OF_RANGE): it restarts from the oldest record kept, as a new
   * group would. Anything else is retried by the loop after a metadata refresh.
   */
  private async recover(failure: unknown): Promise<void> {
    if (kafkaErrorIds(failure).includes('OFFSET_OUT_OF_RANGE')) {
      const partitions = [...this.owned.keys()];
      const earliest = await this.consumer.listOffsets({ topics: [this.topic], partitions: { [this.topic]: partitions }, timestamp: ListOffsetTimestamps.EARLIEST });
      const starts = earliest.get(this.topic) ?? [];
      for (const [partition, state] of this.owned) {
        const start = starts[partition];
        if (start !== undefined && state.position !== null && state.position < start) {
          this.log.warn({ partition, from: state.position.toString(), to: start.toString() }, 'records were deleted by retention before delivery read them');
          state.position = start;
        }
      }
      return;
    }
    throw failure;
  }

  /** Loads the committed offset of newly assigned partitions (the oldest record when the group has none). */
  private async loadPositions(): Promise<void> {
    const unknown = [...this.owned].filter(([, s]) => s.position === null).map(([p]) => p);
    if (unknown.length === 0) return;
    const generation = this.generation;
    const committed = (await this.consumer.listCommittedOffsets({ topics: [{ topic: this.topic, partitions: unknown }] })).get(this.topic) ?? [];
    const missing = unknown.filter((p) => (committed[p] ?? -1n) < 0n);
    // A new group starts at the beginning: events accepted before any delivery node ran must still be delivered.
    const earliest = missing.length > 0 ? ((await this.consumer.listOffsets({ topics: [this.topic], partitions: { [this.topic]: missing }, timestamp: ListOffsetTimestamps.EARLIEST })).get(this.topic) ?? []) : [];
    if (generation !== this.generation) return; // reassigned meanwhile: load again next round
    for (const partition of unknown) {
      const state = this.owned.get(partition);
      const from = (committed[partition] ?? -1n) >= 0n ? committed[partition]! : earliest[partition];
      if (state && state.position === null && from !== undefined) {
        state.position = from;
        state.committed = from;
      }
    }
  }

  async commit(points: ReadonlyArray<readonly [partition: number, nextOffset: bigint]>): Promise<void> {
    // Not ours any more: the new owner commits from where it stands.
    const mine = points.filter(([partition]) => this.owned.has(partition));
    if (mine.length === 0) return;
    // One OffsetCommit for every partition: a request per partition and flush cost more than the fetches.
    await this.consumer.commit({ offsets: mine.map(([partition, offset]) => ({ topic: this.topic, partition, offset, leaderEpoch: -1 })) });
    for (const [partition, offset] of mine) {
      const state = this.owned.get(partition);
      if (state) state.committed = offset;
    }
  }

  lag(): PartitionLag[] {
    const lags: PartitionLag[] = [];
    for (const [partition, state] of this.owned) {
      const end = state.highWatermark;
      const from = state.committed;
      // Not fetched yet: nothing known, reported as 0 rather than left out.
      const lag = end !== null && from !== null && end > from ? end - from : 0n;
      lags.push({ partition, lag });
    }
    return lags.sort((a, b) => a.partition - b.partition);
  }

  pause(): void {
    this.paused = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    // Revoke first: an entry held back by backpressure lets go, so stop() does not wait on it.
    for (const state of this.owned.values()) state.handler.revoke();
    this.owned.clear();
    this.wakeLoop();
    // A fetch in flight to a broker gone silent would hold stop() through its request timeout
    // and the library's retries (minutes): the loop gets a few fetch waits to end by itself,
    // then closing the client below fails that fetch.
    const waitedOut = () => {};
    if (this.loop) await withinMs(this.loop, 5 * FETCH_WAIT_MS).catch(waitedOut);
    await this.liveness?.stop();
    // Leaves the group, so the partitions move at once instead of after the session timeout.
    // leaveGroup() before close(): it ends the client's membership first. Closed mid-rebalance
    // with its membership on, a rejoin that completed after the leave scheduled heartbeats on
    // the closed client (2.12.1), each failure scheduling the next: a timer that held a stopped
    // node's process for good. A leave that fails is tried again by close(), as before; one that
    // hangs (a broker gone silent) holds stop() at most a heartbeat interval before close() cuts it.
    await withinMs(new Promise<void>((resolve) => this.consumer.leaveGroup(false, () => resolve())), this.heartbeatIntervalMs).catch(waitedOut);
    await closeClient(this.consumer);
    await this.loop;
  }
}

function toEntry(partition: number, offset: bigint, value: Buffer | null): LogEntry {
  const entry: LogEntry = { partition, offset, record: null };
  try {
    if (!value) throw new Error('empty message');
    entry.record = decodeEvent(value);
  } catch (err) {
    entry.decodeError = (err as Error).message;
  }
  return entry;
}
