/**
 * A native model behind a queue: its operations (cache allocation, steps) run
 * one at a time in call order, as the addons require, and dispose waits for
 * them. Work queued before dispose() still runs; work queued after rejects.
 * Shared by the CPU and OpenVINO backends.
 */

import { BackendError, WeftError } from '../errors.js';

export class NativeQueue<N extends { dispose(): void }> {
  #native: N | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  /** `name` says which backend in the error for work after dispose. */
  constructor(
    native: N,
    private readonly name: string,
  ) {
    this.#native = native;
  }

  /** The native model, while it is not disposed. */
  get native(): N | undefined {
    return this.#native;
  }

  /** Runs work after everything queued before it; errors that are not WeftErrors become BackendErrors. */
  enqueue<T>(work: (native: N) => Promise<T>): Promise<T> {
    const native = this.#native;
    if (!native) return Promise.reject(new BackendError(`the ${this.name} backend has been disposed`));
    const run = () => work(native);
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => {});
    return result.catch((error: unknown) => {
      throw error instanceof WeftError ? error : new BackendError(String(error), { cause: error });
    });
  }

  /** Waits for queued work, then frees the native model. Idempotent. */
  async dispose(): Promise<void> {
    const native = this.#native;
    if (!native) return;
    this.#native = undefined;
    await this.#queue.catch(() => {});
    native.dispose();
  }
}
