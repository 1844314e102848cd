// Requests that end in unusual ways are still counted, announced and cleaned up.
import { afterEach, expect, it, vi } from 'vitest';
import { AbortError } from '../../src/errors.js';
import { harness, type Harness } from '../support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.pipe.close();
  h = undefined;
});

it('a request whose consumer left early counts as finished and emits request-finish', async () => {
  h = await harness({ backend: { delayMs: 0 } });
  const finishes: string[] = [];
  h.pipe.on('request-finish', (info) => finishes.push(info.finishReason));
  for (let i = 0; i < 5; i++) {
    for await (const part of h.pipe.stream(`prompt ${i}`, { maxTokens: 50, ignoreEos: true, logprobs: 1 })) {
      if (part.type === 'token') break;
    }
  }
  await h.pipe.generate('after', { maxTokens: 3 });
  const stats = h.pipe.stats();
  expect(stats.requests).toEqual({ started: 6, finished: 6 });
  expect(finishes).toEqual(['aborted', 'aborted', 'aborted', 'aborted', 'aborted', 'length']);
  expect(stats.running + stats.waiting).toBe(0);
});

it('many requests sharing one AbortSignal: one listener on it, no MaxListenersExceededWarning, all abort', async () => {
  h = await harness({ backend: { delayMs: 1 } });
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => {
    warnings.push(warning);
  };
  process.on('warning', onWarning);
  try {
    const controller = new AbortController();
    const spy = vi.spyOn(controller.signal, 'addEventListener');
    const runs = Array.from({ length: 40 }, (_, i) =>
      h!.pipe.generate(`shared signal ${i}`, { maxTokens: 500, ignoreEos: true, signal: controller.signal }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const outcomes = await Promise.allSettled(runs);
    expect(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof AbortError)).toBe(true);
    expect(spy).toHaveBeenCalledTimes(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    // The signal's listener is gone once it fired; a new request on a fresh signal works.
    expect((await h.pipe.generate('later', { maxTokens: 2, signal: new AbortController().signal })).tokenIds).toHaveLength(2);
  } finally {
    process.off('warning', onWarning);
  }
});

it('a consumer that leaves after the last token, with the end queued unread, is still counted once (soak: 2 of 10,000)', async () => {
  h = await harness({ backend: { delayMs: 0 } });
  for (let i = 0; i < 10; i++) {
    for await (const part of h.pipe.stream(`last token ${i}`, { maxTokens: 1, ignoreEos: true, logprobs: 1 })) {
      if (part.type === 'token' && i % 2 === 0) break; // the only token: its end is queued in the same step
      if (part.type === 'text-delta' && i % 2 === 1) break;
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
  const { started, finished } = h.pipe.stats().requests;
  expect(finished).toBe(started);
});
