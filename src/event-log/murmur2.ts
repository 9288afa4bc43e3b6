/**
 * Kafka's partitioner hash: murmur2 with Kafka's seed, as the Java client's
 * `Utils.murmur2`; its default partitioner puts a keyed record in partition
 * `(murmur2(key) & 0x7fffffff) % partitions`. Both logs place keys with it
 * (the Kafka writer's partitioner, the embedded writer), so an event's
 * partition is the same whichever log runs and where a Java producer would
 * put it: a key that changed partition would lose its order. In 32-bit
 * integer arithmetic (`Math.imul`, `>>>`) as the Java code is, where
 * @platformatic/kafka's port computes in BigInt, allocating on every 4 bytes
 * of the key at 30-38x the CPU (docs/decisions/kafka-partition-hash.md).
 * `length` hashes only the first bytes of `data` (a reused scratch buffer).
 */
export function murmur2(data: Uint8Array, length = data.length): number {
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ length) | 0;
  const whole = length & ~3;
  let i = 0;
  for (; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  // The last one to three bytes, as Java's switch falls through its cases.
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[i + 2]! << 16;
    if (rest >= 2) h ^= data[i + 1]! << 8;
    h ^= data[i]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** What the partitioner takes modulo the partition count: the hash with its sign bit cleared. */
export function partitionHash(key: Uint8Array): number {
  return murmur2(key) & 0x7fffffff;
}

/** The partition of a keyed record, as Kafka's default partitioner places it. */
export function partitionOf(key: string | Uint8Array, partitions: number): number {
  return partitionHash(typeof key === 'string' ? Buffer.from(key) : key) % partitions;
}
