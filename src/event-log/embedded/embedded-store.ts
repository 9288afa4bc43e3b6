import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';

/**
 * The embedded event log's storage: one LMDB environment on local disk.
 *
 *   events   [partition, offset] → record bytes (msgpack, as on Kafka)
 *   commits  [group, partition]  → next offset the group resumes from
 *
 * Offsets are dense per partition and assigned in append order. Writes are
 * batched by lmdb-js into transactions; `overlappingSync: false` makes a put's
 * promise resolve only after its transaction is synced to disk, which is when
 * ingress may answer 202.
 */
export class EmbeddedStore {
  readonly events: Database<Buffer, [number, number]>;
  readonly commits: Database<number, [string, number]>;
  private readonly root: RootDatabase;
  private readonly nextOffsets: number[];
  private readonly listeners = new Set<(partition: number) => void>();
  private users = 0;

  readonly dir: string;
  readonly partitions: number;
  constructor(
    dir: string,
    partitions: number,
  ) {
    this.dir = dir;
    this.partitions = partitions;
    mkdirSync(dir, { recursive: true });
    this.root = open({ path: dir, compression: false, overlappingSync: false, maxDbs: 4 });
    this.events = this.root.openDB<Buffer, [number, number]>({ name: 'events', encoding: 'binary' });
    this.commits = this.root.openDB<number, [string, number]>({ name: 'commits', encoding: 'msgpack' });
    const stored = this.root.get('partitions') as number | undefined;
    if (stored !== undefined && stored !== partitions) {
      throw new Error(`the embedded log at ${dir} has ${stored} partitions; configuration says ${partitions}`);
    }
    if (stored === undefined) this.root.putSync('partitions', partitions);
    this.nextOffsets = Array.from({ length: partitions }, (_v, p) => {
      for (const key of this.events.getKeys({ start: [p, Number.MAX_SAFE_INTEGER], end: [p, -1], reverse: true, limit: 1 })) {
        return key[1] + 1;
      }
      return 0;
    });
  }

  /** Reserves the next offset of a partition (synchronous: defines the order). */
  nextOffset(partition: number): number {
    return this.nextOffsets[partition]!++;
  }

  /** Highest offset + 1 written so far in a partition. */
  endOffset(partition: number): number {
    return this.nextOffsets[partition]!;
  }

  onAppend(listener: (partition: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  appended(partition: number): void {
    for (const listener of this.listeners) listener(partition);
  }

  acquire(): this {
    this.users++;
    return this;
  }

  async release(): Promise<void> {
    if (--this.users > 0) return;
    if (stores.get(this.dir) === this) stores.delete(this.dir);
    await this.root.close();
  }
}

const stores = new Map<string, EmbeddedStore>();

/** One store per directory and process: writer and reader share it. */
export function embeddedStore(dir: string, partitions: number): EmbeddedStore {
  let store = stores.get(dir);
  if (!store) {
    store = new EmbeddedStore(dir, partitions);
    stores.set(dir, store);
  }
  return store.acquire();
}
