/**
 * The node threads of a process join the consumer group together.
 *
 * Each thread is a group member of its own. Started one after another, the
 * first joins alone, takes every partition and starts delivering; each
 * thread that joins after it triggers a rebalance, and what the previous
 * owner had delivered but not yet committed is sent again by the new one
 * (the backlog bench saw 1,522–6,101 duplicates in 200,000 at four threads).
 * So every thread waits here, after its other roles are up and before its
 * delivery role joins, until all of them have arrived: their JoinGroup
 * requests reach the coordinator within milliseconds of each other and the
 * group forms once.
 *
 * A member whose start failed is excused (it is started again later and
 * joins on its own, which rebalances once, as any thread restart does); and
 * the wait is bounded, because a delivery that never starts is worse than
 * duplicates. Once open, the barrier lets every later arrival through at once.
 */
export class ConsumeBarrier {
  private opened = false;
  private readonly arrived = new Set<number>();
  private readonly excused = new Set<number>();
  private settle: (() => void) | null = null;

  private readonly members: readonly number[];
  private readonly release: (member: number) => void;
  constructor(
    /** Every member expected (thread indexes). */
    members: readonly number[],
    /** Lets one member join the group. */
    release: (member: number) => void,
  ) {
    this.members = members;
    this.release = release;
  }

  get isOpen(): boolean {
    return this.opened;
  }

  /** `member` is ready to join the group; released now when the barrier is open, or when it opens. */
  arrive(member: number): void {
    if (this.opened) {
      this.release(member);
      return;
    }
    this.excused.delete(member);
    this.arrived.add(member);
    this.recheck();
  }

  /** `member` will not arrive soon (its start failed): the others do not wait for it. */
  excuse(member: number): void {
    if (this.opened || this.arrived.has(member)) return;
    this.excused.add(member);
    this.recheck();
  }

  /**
   * Resolves once every member has arrived or been excused, or after `waitMs`;
   * then opens, releasing every member that arrived. Returns the members that
   * had not arrived (empty when all did).
   */
  async gather(waitMs: number): Promise<number[]> {
    if (!this.opened && !this.complete()) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.settle = resolve;
        timer = setTimeout(resolve, waitMs);
      });
      clearTimeout(timer);
      this.settle = null;
    }
    return this.open();
  }

  private open(): number[] {
    if (this.opened) return [];
    this.opened = true;
    for (const member of this.arrived) this.release(member);
    return this.members.filter((m) => !this.arrived.has(m));
  }

  private complete(): boolean {
    return this.members.every((m) => this.arrived.has(m) || this.excused.has(m));
  }

  private recheck(): void {
    if (this.settle && this.complete()) this.settle();
  }
}
