/** The label value that stands for every target or queue past the cap. */
export const OVERFLOW_LABEL = 'other';

/**
 * Bounds a label's cardinality: the first `max` distinct values keep their
 * own label value, every later one is counted under `other`. Values seen once
 * keep their place for the life of the process (a series must not change label).
 */
export class LabelCap {
  private readonly seen = new Set<string>();

  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  label(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OVERFLOW_LABEL;
    this.seen.add(value);
    return value;
  }
}
