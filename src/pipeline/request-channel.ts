/**
 * Bridges one engine request (push: RequestSink callbacks from the loop) to
 * its consumer (pull: an async iterator). Buffers whatever the consumer has not
 * read yet; nothing is dropped.
 */

import type { FinishInfo, RequestDelta, RequestSink } from '../engine/engine.js';

export type ChannelItem = { readonly kind: 'delta'; readonly delta: RequestDelta } | { readonly kind: 'finish'; readonly info: FinishInfo };

export class RequestChannel implements RequestSink, AsyncIterable<ChannelItem> {
  private readonly items: ChannelItem[] = [];
  private wake: (() => void) | undefined;
  private finished = false;

  onDelta(delta: RequestDelta): void {
    this.push({ kind: 'delta', delta });
  }

  onFinish(info: FinishInfo): void {
    this.finished = true;
    this.push({ kind: 'finish', info });
  }

  get isFinished(): boolean {
    return this.finished;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ChannelItem> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        if (item.kind === 'finish') return;
        continue;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private push(item: ChannelItem): void {
    this.items.push(item);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
