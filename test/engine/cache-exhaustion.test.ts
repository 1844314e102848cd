/**
 * The OpenVINO Model Server crash (DESIGN.md) as a test, and scheduler
 * properties over random workloads: exhausting the cache degrades, never
 * aborts, and never touches innocent requests.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortError, PromptTooLongError } from '../../src/errors.js';
import { harness } from '../support/harness.js';

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('the OVMS cache-exhaustion crash, replayed', () => {
  it('16 long generations over a cache that fits about two, with aborts and breaks: all end, nothing leaks', async () => {
    for (const extraPools of [undefined, [
      { name: 'linear-state', blockSize: Infinity, bytesPerBlock: 256 },
      { name: 'checkpoints', blockSize: 32, bytesPerBlock: 256 },
    ]]) {
      // Each request needs (30 + 120) / 4 ≈ 38 blocks; 80 blocks fit about two.
      const h = await harness({
        blocks: 80,
        backend: { ...(extraPools && { extraPools }), delayMs: 0 },
        scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 96, prefixCaching: true },
      });
      const rng = seeded(extraPools ? 7 : 3);
      const prompts = Array.from({ length: 16 }, (_, i) => `request ${i} ${'long context '.repeat(1 + (i % 3))}`.slice(0, 30));
      const plans = prompts.map(() => {
        const roll = rng();
        return roll < 0.25 ? 'abort' : roll < 0.45 ? 'break' : 'finish';
      });
      const outcomes = await Promise.allSettled(
        prompts.map(async (prompt, i) => {
          const controller = new AbortController();
          const stopAt = 1 + Math.floor(rng() * 60);
          const ids: number[] = [];
          const options = { maxTokens: 120, ignoreEos: true, temperature: 0, signal: controller.signal, logprobs: 1 };
          for await (const part of h.pipe.stream(prompt, options)) {
            if (part.type !== 'token') continue;
            ids.push(...part.tokenIds);
            if (plans[i] === 'abort' && ids.length === stopAt) controller.abort();
            if (plans[i] === 'break' && ids.length === stopAt) break;
          }
          return ids;
        }),
      );
      outcomes.forEach((outcome, i) => {
        if (plans[i] === 'abort') {
          expect(outcome.status).toBe('rejected');
          if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(AbortError);
        } else {
          expect(outcome.status).toBe('fulfilled');
          // Every stream, finished or broken off, got exactly a prefix of its solo output.
          if (outcome.status === 'fulfilled') {
            const solo = h.expected(prompts[i]!, 120, true);
            expect(outcome.value).toEqual(solo.slice(0, outcome.value.length));
            if (plans[i] === 'finish') expect(outcome.value).toEqual(solo);
          }
        }
      });
      const stats = h.pipe.stats();
      expect(stats.preemptions).toBeGreaterThan(0);
      expect(stats.running + stats.waiting).toBe(0);
      for (const pool of stats.kv.pools) expect(pool.usedBlocks).toBe(0);
      if (extraPools) expect(stats.kv.pools.map((p) => p.name)).toEqual(['attention', 'linear-state', 'checkpoints']);
      await h.pipe.close();
    }
  });
});

describe('scheduler properties over random workloads', () => {
  it('every request ends, outputs equal solo outputs, limits hold every step, no block leaks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          blocks: fc.integer({ min: 12, max: 200 }),
          blockSize: fc.constantFrom(1, 2, 4, 16),
          maxNumSeqs: fc.integer({ min: 1, max: 8 }),
          extraBudget: fc.integer({ min: 0, max: 56 }),
          prefixCaching: fc.boolean(),
          policy: fc.constantFrom('fcfs' as const, 'priority' as const),
          requests: fc.array(
            fc.record({
              prompt: fc.string({ minLength: 1, maxLength: 12 }),
              maxTokens: fc.integer({ min: 1, max: 24 }),
              priority: fc.integer({ min: 0, max: 3 }),
              abortAfter: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
            }),
            { minLength: 1, maxLength: 10 },
          ),
        }),
        async (workload) => {
          const h = await harness({
            blocks: workload.blocks,
            blockSize: workload.blockSize,
            backend: { eosPercent: 5 },
            scheduler: {
              maxNumSeqs: workload.maxNumSeqs,
              maxNumBatchedTokens: workload.maxNumSeqs + workload.extraBudget,
              prefixCaching: workload.prefixCaching,
              policy: workload.policy,
            },
          });
          h.backend.recordBatches = true;
          const capacity = workload.blocks * workload.blockSize;
          const results = await Promise.allSettled(
            workload.requests.map(async (r) => {
              const controller = new AbortController();
              const ids: number[] = [];
              let finish = '';
              for await (const part of h.pipe.stream(r.prompt, { maxTokens: r.maxTokens, temperature: 0, priority: r.priority, signal: controller.signal, logprobs: 1 })) {
                if (part.type === 'token') ids.push(...part.tokenIds);
                if (part.type === 'finish') finish = part.finishReason;
                if (r.abortAfter !== undefined && ids.length === r.abortAfter) controller.abort();
              }
              return { ids, finish };
            }),
          );
          results.forEach((result, i) => {
            const request = workload.requests[i]!;
            const promptTokens = h.tokenizer.encode(request.prompt).length;
            if (result.status === 'rejected') {
              // Aborted, or a prompt too long for this tiny cache: nothing else.
              const tooLong = promptTokens + 1 > capacity;
              if (result.reason instanceof AbortError) expect(request.abortAfter).toBeDefined();
              else expect(result.reason instanceof PromptTooLongError && tooLong).toBe(true);
              return;
            }
            const { ids, finish } = result.value;
            const solo = h.expected(request.prompt, request.maxTokens);
            // 'length' comes early only when the request outgrew the whole cache.
            expect(ids).toEqual(solo.slice(0, ids.length));
            if (finish === 'length' && ids.length < request.maxTokens) expect(promptTokens + ids.length + 1).toBeGreaterThan(capacity);
            if (finish === 'stop') expect(ids).toEqual(solo);
          });
          for (const batch of h.backend.steps) {
            expect(batch.pastLens.length).toBeLessThanOrEqual(workload.maxNumSeqs);
            expect(batch.inputIds.length).toBeLessThanOrEqual(workload.maxNumSeqs + workload.extraBudget);
          }
          const stats = h.pipe.stats();
          expect(stats.running + stats.waiting).toBe(0);
          expect(stats.kv.pools[0]!.usedBlocks).toBe(0);
          await h.pipe.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('does not livelock when every request is blocked behind a full cache', async () => {
    // Each request needs the whole cache: they can only run one at a time.
    const h = await harness({ blocks: 10, blockSize: 4, scheduler: { maxNumSeqs: 8 } });
    const texts = Array.from({ length: 8 }, (_, i) => `blocked ${i}`);
    const results = await Promise.all(texts.map((t) => h.pipe.generate(t, { maxTokens: 28, ignoreEos: true, temperature: 0 })));
    results.forEach((result, i) => expect(result.tokenIds).toEqual(h.expected(texts[i]!, result.tokenIds.length, true)));
    expect(results.every((r) => r.tokenIds.length >= 25)).toBe(true);
    expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
    await h.pipe.close();
  });
});

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
}
