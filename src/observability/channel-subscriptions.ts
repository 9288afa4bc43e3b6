import type { Channel } from 'node:diagnostics_channel';

/** Channel subscriptions made together and dropped together (a node's metrics on stop). */
export class ChannelSubscriptions {
  private readonly made: Array<[Channel, (message: unknown, name: string | symbol) => void]> = [];

  on<T>(channel: Channel, listener: (message: T) => void): void {
    const wrapped = listener as (message: unknown) => void;
    channel.subscribe(wrapped);
    this.made.push([channel, wrapped]);
  }

  close(): void {
    for (const [channel, listener] of this.made.splice(0)) channel.unsubscribe(listener);
  }
}
