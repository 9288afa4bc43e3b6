/**
 * Whether a subscription is live or paused (docs/api.md#resources-and-states), as a pure rule over
 * the blocks that exist. Nothing about it is stored: the status follows from
 * the block rows every time, so the state table's transitions hold by
 * construction, whatever order blocks, un-blocks and package changes come in:
 *
 *   paused  ⇔  the integration blocks the stream itself
 *              OR blocks any package that contains the stream
 *
 * - block of the stream, or of a package containing it   → paused
 * - un-block of the stream while a package block covers it → still paused
 * - un-block of a package → live only if no block covers it any more
 * - a package block wins over the stream's other package memberships
 *
 * Used by delivery (the routing gate) and by the API (subscription status) alike.
 */
export type SubscriptionStatus = 'live' | 'paused';

/** What one integration's blocks say about one stream. */
export interface BlockFacts {
  /** The integration blocks this stream directly. */
  streamBlocked: boolean;
  /** The packages the stream belongs to. */
  packagesOfStream: readonly string[];
  /** The packages this integration blocks. */
  blockedPackages: ReadonlySet<string>;
}

export function subscriptionStatus(facts: BlockFacts): SubscriptionStatus {
  if (facts.streamBlocked) return 'paused';
  for (const pkg of facts.packagesOfStream) if (facts.blockedPackages.has(pkg)) return 'paused';
  return 'live';
}

/**
 * The blocks and package memberships of one producer, in memory: what the
 * block tables hold, with the status rule above on top. Repositories fill it
 * from rows; the unit tests drive it through the state table.
 */
export class BlockLedger {
  private readonly streamBlocks = new Map<string, Set<string>>();
  private readonly packageBlocks = new Map<string, Set<string>>();
  private readonly packagesByStream = new Map<string, Set<string>>();

  blockStream(integration: string, stream: string): void {
    add(this.streamBlocks, integration, stream);
  }

  unblockStream(integration: string, stream: string): void {
    this.streamBlocks.get(integration)?.delete(stream);
  }

  blockPackage(integration: string, pkg: string): void {
    add(this.packageBlocks, integration, pkg);
  }

  unblockPackage(integration: string, pkg: string): void {
    this.packageBlocks.get(integration)?.delete(pkg);
  }

  addToPackage(pkg: string, stream: string): void {
    add(this.packagesByStream, stream, pkg);
  }

  removeFromPackage(pkg: string, stream: string): void {
    this.packagesByStream.get(stream)?.delete(pkg);
  }

  facts(integration: string, stream: string): BlockFacts {
    return {
      streamBlocked: this.streamBlocks.get(integration)?.has(stream) ?? false,
      packagesOfStream: [...(this.packagesByStream.get(stream) ?? [])],
      blockedPackages: this.packageBlocks.get(integration) ?? EMPTY,
    };
  }

  status(integration: string, stream: string): SubscriptionStatus {
    return subscriptionStatus(this.facts(integration, stream));
  }
}

const EMPTY: ReadonlySet<string> = new Set();

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}
