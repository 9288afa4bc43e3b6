/** The parts as one view when they are consecutive slices of the same memory (as read from a socket); null otherwise. */
export function contiguous(parts: readonly Buffer[]): Buffer | null {
  const first = parts[0]!;
  let end = first.byteOffset + first.length;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.buffer !== first.buffer || part.byteOffset !== end) return null;
    end += part.length;
  }
  return Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}
