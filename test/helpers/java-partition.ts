/**
 * Kafka's Java client places a keyed record with murmur2(key) & 0x7fffffff mod
 * partitions. Written out here independently of src/event-log/murmur2.ts, so the
 * tests fail if streamgate ever stops keying records the way any Java consumer
 * would expect.
 */
export function javaPartition(key: string, partitions: number): number {
  const data = Buffer.from(key);
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ data.length) | 0;
  const len4 = data.length & ~3;
  for (let i = 0; i < len4; i += 4) {
    let k = data.readInt32LE(i);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = data.length & 3;
  if (rest === 3) h ^= data[len4 + 2]! << 16;
  if (rest >= 2) h ^= data[len4 + 1]! << 8;
  if (rest >= 1) {
    h ^= data[len4]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return (h & 0x7fffffff) % partitions;
}
