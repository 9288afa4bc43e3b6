// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-frame.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
/**
 * Cuts a Kafka connection's byte stream into response frames. Each response is
 *
 *   int32 size | size bytes (int32 correlation_id, then the body)
 *
 * and TCP delivers them in chunks that need not line up with frames: one chunk
 * may hold several frames, and one frame may span several chunks (cut anywhere,
 * even inside the size prefix). A frame that lies whole in one chunk is handed
 * on as a view of that chunk (no copy); only a frame split across chunks is
 * gathered into a buffer of its own.
 */
export class FrameSplitter {
    onFrame;
    maxFrameBytes;
    /** The frame being gathered across chunks (allocated at its full size), if any. */
    partial = null;
    partialFilled = 0;
    /** A size prefix split across chunks. */
    prefix = Buffer.alloc(4);
    prefixFilled = 0;
    constructor(onFrame, 
    /** Larger sizes mean a corrupt stream (or not Kafka at all): refuse them. */
    maxFrameBytes = 256 * 1024 * 1024) {
        this.onFrame = onFrame;
        this.maxFrameBytes = maxFrameBytes;
    }
    /** Feeds one chunk; calls `onFrame` for every frame it completes, in order. Throws on a corrupt size. */
    push(chunk) {
        let i = 0;
        const end = chunk.length;
        while (i < end) {
            if (this.partial) {
                const take = Math.min(this.partial.length - this.partialFilled, end - i);
                chunk.copy(this.partial, this.partialFilled, i, i + take);
                this.partialFilled += take;
                i += take;
                if (this.partialFilled === this.partial.length) {
                    const frame = this.partial;
                    this.partial = null;
                    this.onFrame(frame);
                }
                continue;
            }
            let size;
            if (this.prefixFilled > 0 || end - i < 4) {
                const take = Math.min(4 - this.prefixFilled, end - i);
                chunk.copy(this.prefix, this.prefixFilled, i, i + take);
                this.prefixFilled += take;
                i += take;
                if (this.prefixFilled < 4)
                    return;
                this.prefixFilled = 0;
                size = this.checked(this.prefix.readInt32BE(0));
            }
            else {
                size = this.checked(chunk.readInt32BE(i));
                i += 4;
            }
            if (end - i >= size) {
                this.onFrame(chunk.subarray(i, i + size));
                i += size;
            }
            else {
                this.partial = Buffer.allocUnsafe(size);
                this.partialFilled = 0;
            }
        }
    }
    /** True while a frame has begun but not ended. */
    get midFrame() {
        return this.partial !== null || this.prefixFilled > 0;
    }
    checked(size) {
        // Every response holds at least its correlation id.
        if (size < 4 || size > this.maxFrameBytes)
            throw new RangeError(`invalid Kafka response frame size ${size}`);
        return size;
    }
}
