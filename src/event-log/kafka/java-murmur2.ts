const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/**
 * Kafka's Java client's murmur2 (`Utils.murmur2`): its default partitioner
 * puts a keyed record in partition `(murmur2(key) & 0x7fffffff) % partitions`,
 * so records keyed here land where a Java producer would put them, and where
 * earlier versions of streamgate did (a key that changed partition would lose
 * its order). In 32-bit integer arithmetic (`Math.imul`, `>>>`) as the Java
 * code is, where @platformatic/kafka's port computes in BigInt: one hash per
 * appended record, and that one allocates on every 4 bytes of the key and
 * costs 30-38x the CPU (docs/decisions/kafka-partition-hash.md).
 */
export function javaMurmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  let i = 0;
  for (; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The last one to three bytes, as Java's switch falls through its cases.
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[i + 2]! << 16;
    if (rest >= 2) h ^= data[i + 1]! << 8;
    h ^= data[i]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** What the Java client's partitioner takes modulo the partition count: the hash with its sign bit cleared. */
export function javaPartitionHash(key: Uint8Array): number {
  return javaMurmur2(key) & 0x7fffffff;
}

/** The partition Kafka's Java client gives a record with this key. */
export function javaPartitionOf(key: Uint8Array, partitions: number): number {
  return javaPartitionHash(key) % partitions;
}
