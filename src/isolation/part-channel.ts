/** One remote request's parts as they arrive from the child, as an async iterator; ends with end() or fail(). */

import type { RequestPart } from '../pipeline/run-request.js';

export class PartChannel implements AsyncIterable<RequestPart> {
  private readonly parts: RequestPart[] = [];
  private outcome: { readonly error?: Error } | undefined;
  private wake: (() => void) | undefined;

  get isSettled(): boolean {
    return this.outcome !== undefined;
  }

  push(part: RequestPart): void {
    if (this.outcome) return;
    this.parts.push(part);
    this.notify();
  }

  end(): void {
    this.outcome ??= {};
    this.notify();
  }

  fail(error: Error): void {
    this.outcome ??= { error };
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RequestPart> {
    for (;;) {
      const part = this.parts.shift();
      if (part !== undefined) {
        yield part;
        continue;
      }
      if (this.outcome) {
        if (this.outcome.error) throw this.outcome.error;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
