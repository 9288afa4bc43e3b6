// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/crc32c.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of a
 * Kafka RecordBatch v2. Slicing-by-8: eight 256-entry tables let one step
 * consume eight bytes with eight independent lookups instead of eight
 * dependent ones, several times faster than the byte-at-a-time loop in pure JS.
 * Every event body passes through here once, so its speed is ingress's speed.
 */
const POLY = 0x82f63b78;
function table() {
    const t = Array.from({ length: 8 }, () => new Int32Array(256));
    for (let n = 0; n < 256; n++) {
        let c = n;
        for (let k = 0; k < 8; k++)
            c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
        t[0][n] = c;
    }
    // t[k][n] = CRC of byte n followed by k zero bytes.
    for (let k = 1; k < 8; k++) {
        for (let n = 0; n < 256; n++) {
            const prev = t[k - 1][n];
            t[k][n] = (prev >>> 8) ^ t[0][prev & 0xff];
        }
    }
    return t;
}
const [T0, T1, T2, T3, T4, T5, T6, T7] = table();
/** The CRC-32C of `buf[start, end)`, as an unsigned 32-bit number. */
export function crc32c(buf, start = 0, end = buf.length) {
    let crc = -1;
    let i = start;
    const whole = end - ((end - start) & 7);
    while (i < whole) {
        const a = crc ^ (buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24));
        crc =
            T7[a & 0xff] ^ T6[(a >>> 8) & 0xff] ^ T5[(a >>> 16) & 0xff] ^ T4[a >>> 24] ^
                T3[buf[i + 4]] ^ T2[buf[i + 5]] ^ T1[buf[i + 6]] ^ T0[buf[i + 7]];
        i += 8;
    }
    while (i < end)
        crc = T0[(crc ^ buf[i++]) & 0xff] ^ (crc >>> 8);
    return ~crc >>> 0;
}
