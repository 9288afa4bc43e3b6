/**
 * Kafka's partitioner hash: murmur2 with Kafka's seed, as the Java client's
 * `Utils.murmur2`, then `toPositive(hash) % partitions`. The embedded log uses
 * it too, so an event's partition is the same whichever log runs. `length`
 * hashes only the first bytes of `data` (a reused scratch buffer).
 */
export function murmur2(data: Buffer, length = data.length): number {
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data.readInt32LE(i);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2]! << 16;
  if (rest >= 2) h ^= data[whole + 1]! << 8;
  if (rest >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
}

/** The partition of a keyed record, as Kafka's default partitioner places it. */
export function partitionOf(key: string, partitions: number): number {
  return (murmur2(Buffer.from(key)) & 0x7fffffff) % partitions;
}
