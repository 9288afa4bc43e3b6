import { join, resolve } from 'node:path';
import type { Config } from '../../config/schema.js';
import { retentionMs, type EventLogBackend } from '../event-log.js';
import { findEmbeddedSince } from './embedded-find.js';
import { embeddedStore } from './embedded-store.js';
import { EmbeddedWriter } from './embedded-writer.js';
import { EmbeddedReader } from './embedded-reader.js';

/** The embedded log (LMDB under dataDir/log) as an event log backend. */
export function embeddedEventLog(config: Readonly<Config>): EventLogBackend {
  const dir = join(resolve(config.dataDir), 'log');
  const { partitions, batchSize, pollMs } = config.embeddedLog;
  return {
    kind: 'embedded',
    prepare: async () => {},
    close: async () => {},
    openWriter: async () => new EmbeddedWriter(embeddedStore(dir, partitions)),
    openReader: (log) =>
      new EmbeddedReader(embeddedStore(dir, partitions), { group: config.kafka.groupId, batchSize, pollMs, retentionMs: retentionMs(config) }, log),
    readAt: async (partition, offset) => {
      const store = embeddedStore(dir, partitions);
      try {
        return store.events.get([partition, Number(offset)]) ?? null;
      } finally {
        await store.release();
      }
    },
    findSince: async (sinceMs, windowMs, match) => {
      const store = embeddedStore(dir, partitions);
      try {
        return findEmbeddedSince(store, sinceMs, windowMs, match);
      } finally {
        await store.release();
      }
    },
  };
}

