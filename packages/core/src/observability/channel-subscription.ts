import { subscribe, unsubscribe } from 'node:diagnostics_channel';

/** A listener of one request channel (request-channels.ts), by the channel's name. */
export type ChannelListener = readonly [channel: string, listener: (message: unknown) => void];

/**
 * A tracer's listeners on the request channels, subscribed only while it is on: with
 * tracing off, the request path pays one `hasSubscribers` check per stage.
 */
export class ChannelSubscription {
  private subscribed = false;

  constructor(private readonly listeners: readonly ChannelListener[]) {}

  /** Subscribes while `on`, and only then. */
  set(on: boolean): void {
    if (on === this.subscribed) return;
    this.subscribed = on;
    for (const [channel, listener] of this.listeners) (on ? subscribe : unsubscribe)(channel, listener);
  }
}
