import t from 'tap';
import * as kafka from '@platformatic/kafka';
import { loadConfig } from '../../../../src/config/load-config.js';
import type { EventRecord } from '../../../../src/event-log/event-record.js';
import { createLogger } from '../../../../src/observability/logger.js';

/**
 * The writer's answer when no broker answers at all (cluster down or cut
 * off): the library's retries go on up to kafka.producer.unreachableMs, then
 * each append gives up at its first failed attempt (a 503 within about a
 * second instead of after retryMs), until a broker answers again. The
 * library's producer is replaced by a stand-in that retries as the library
 * does (each failure goes through the retryDelay option, until the producer
 * is closed) and whose requests fail as a refused connection does; the real
 * broker cannot be taken down under a shared test run.
 */
type RetryDelay = (client: object, operation: string, attempt: number, retries: number, error: Error) => number;

class FakeProducer {
  static down = true;
  /** Requests that went out: producer id requests and sends alike. */
  static attempts = 0;
  /** Producers the writer closed (gave up on). */
  static closed = 0;
  readonly connections = new Map();
  readonly currentMetadata = undefined;
  private readonly retryDelay: RetryDelay;
  private isClosed = false;
  constructor(options: { retryDelay: RetryDelay }) {
    this.retryDelay = options.retryDelay;
  }
  on(): this {
    return this;
  }
  async initIdempotentProducer(): Promise<object> {
    return this.request('initProducerId');
  }
  async metadata(): Promise<object> {
    return this.request('metadata');
  }
  async send(): Promise<object> {
    return this.request('produce');
  }
  /** One library call: retried after each failure until it succeeds or the producer is closed. */
  private async request(operation: string): Promise<object> {
    for (let attempt = 1; ; attempt++) {
      if (this.isClosed) throw Object.assign(new Error('Client is closed.'), { code: 'PLT_KFK_NETWORK', canRetry: false });
      FakeProducer.attempts++;
      if (!FakeProducer.down) return {};
      const delay = this.retryDelay(this, operation, attempt, Infinity, refused());
      await new Promise((r) => setTimeout(r, delay));
    }
  }
  close(_force?: boolean, done?: () => void): Promise<void> {
    this.isClosed = true;
    FakeProducer.closed++;
    done?.();
    return Promise.resolve();
  }
}

/** What the library throws when the broker refuses the connection: a NetworkError, no protocol answer. */
function refused(): Error {
  return Object.assign(new Error('Connection to 127.0.0.1:9092 failed.'), { code: 'PLT_KFK_NETWORK', canRetry: true, cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9092'), { code: 'ECONNREFUSED' }) });
}

const { KafkaWriter } = await t.mockImport<typeof import('../../../../src/event-log/kafka/kafka-writer.js')>('../../../../src/event-log/kafka/kafka-writer.js', {
  '@platformatic/kafka': { ...kafka, Producer: FakeProducer },
});

function writer(producer: { retryMs: number; unreachableMs: number }) {
  return new KafkaWriter(loadConfig({}, { kafka: { brokers: ['127.0.0.1:9092'], topic: 't', producer } }).kafka, createLogger('silent'));
}

function event(n: number): EventRecord {
  return {
    v: 1, id: `evt_${n}`, tenantPublicId: 'ten_test', workspaceId: '1', queueId: 'q1', queueName: 'q', receivedAt: Date.now(),
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: `k${n}`, path: null, body: Buffer.from('{}'),
  };
}

/** How append() ended and how long it took. */
async function timed(p: Promise<void>): Promise<{ ms: number; error: Error | null }> {
  const started = Date.now();
  const error = await p.then(() => null, (err: Error) => err);
  return { ms: Date.now() - started, error };
}

t.test('brokers silent: retries until unreachableMs, then every append fails at its first attempt, until a broker answers', async (t) => {
  FakeProducer.down = true;
  const w = writer({ retryMs: 20_000, unreachableMs: 400 });
  const first = await timed(w.append(event(1)));
  t.ok(first.error, 'the first append fails');
  t.match(first.error?.message, /no broker has answered for \d+ ms/);
  t.ok(first.ms >= 350 && first.ms < 5_000, `after about unreachableMs, not retryMs (${first.ms} ms)`);

  const before = FakeProducer.attempts;
  const second = await timed(w.append(event(2)));
  t.ok(second.error, 'a later append fails too');
  t.equal(FakeProducer.attempts - before, 1, 'after one attempt');
  t.ok(FakeProducer.closed >= 2, `each producer given up on is closed, so its retries stop (${FakeProducer.closed})`);
  t.ok(second.ms < 1_000, `at once (${second.ms} ms)`);

  FakeProducer.down = false;
  t.equal((await timed(w.append(event(3)))).error, null, 'the first answer ends it: appends succeed again');

  FakeProducer.down = true;
  const again = await timed(w.append(event(4)));
  t.ok(again.error && again.ms >= 350, `a new silence is waited out again before failing fast (${again.ms} ms)`);
  await w.close();
});

t.test('unreachableMs 0: a silent cluster is retried for the whole retryMs', async (t) => {
  FakeProducer.down = true;
  const w = writer({ retryMs: 700, unreachableMs: 0 });
  const result = await timed(w.append(event(1)));
  t.match(result.error?.message, /within kafka\.producer\.retryMs \(700 ms\)/);
  t.ok(result.ms >= 650, `after retryMs (${result.ms} ms)`);
  await w.close();
});
