/**
 * Speculative decoding by prompt lookup (src/engine/speculative.ts) over the
 * test backend, whose "model" reads each context back through the block
 * tables: a draft position left in the cache, a wrong roll-back or a row read
 * at the wrong place changes the output. Every speculative run is compared
 * with the same requests run without speculation.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine, type FinishInfo } from '../../src/engine/engine.js';
import { KvCacheManager } from '../../src/engine/kv/kv-cache-manager.js';
import type { Request } from '../../src/engine/request.js';
import { lookupDraft } from '../../src/engine/speculative.js';
import { GREEDY } from '../../src/sampling/params.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';
import { AbortError, InvalidOptionError } from '../../src/errors.js';
import { EOS } from '../support/byte-tokenizer.js';
import type { SpeculativeOptions } from '../../src/pipeline/options.js';
import { harness, type Harness } from '../support/harness.js';

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

function fnv(context: readonly number[]): number {
  let hash = 2166136261;
  for (const token of context) hash = Math.imul(hash ^ token, 16777619);
  return hash >>> 0;
}

const LETTERS = [...'abcdefghij klmnop'].map((c) => c.charCodeAt(0));

/**
 * A "model" that mostly quotes its context (the token 9 back), so prompt
 * lookup drafts are often right, sometimes deviates (rejections), and ends
 * with EOS now and then.
 */
function quotingRule(context: readonly number[]): number {
  const hash = fnv(context);
  if (context.length > 24 && hash % 61 === 0) return EOS;
  if (context.length < 9 || hash % 7 === 0) return LETTERS[(hash >>> 8) % LETTERS.length]!;
  return context[context.length - 9]!;
}

interface Outcome {
  readonly text?: string;
  readonly tokenIds?: number[];
  readonly finishReason?: string;
  readonly error?: string;
}

async function runAll(h: Harness, requests: readonly { prompt: string; maxTokens: number; stop?: string[] }[], speculative?: SpeculativeOptions): Promise<Outcome[]> {
  return Promise.all(
    requests.map(async (r) => {
      try {
        const result = await h.pipe.generate(r.prompt, { maxTokens: r.maxTokens, temperature: 0, ...(r.stop && { stop: r.stop }), ...(speculative && { speculative }) });
        return { text: result.text, tokenIds: result.tokenIds, finishReason: result.finishReason };
      } catch (error) {
        return { error: (error as Error).constructor.name };
      }
    }),
  );
}

describe('lookupDraft', () => {
  it('proposes what followed the latest earlier occurrence of the last n tokens', () => {
    expect(lookupDraft([1, 2, 3, 9, 1, 2, 3, 7, 8, 1, 2, 3], 3, 4)).toEqual([7, 8, 1, 2]);
    expect(lookupDraft([1, 2, 3, 9, 1, 2, 3], 3, 2)).toEqual([9, 1]);
    expect(lookupDraft([5, 5, 5], 1, 4)).toEqual([5]); // the continuation may run into the suffix itself
    expect(lookupDraft([1, 2, 3, 4], 2, 4)).toEqual([]);
    expect(lookupDraft([1, 2, 1, 2], 2, 0)).toEqual([]);
    expect(lookupDraft([1], 3, 4)).toEqual([]);
  });
});

describe('speculative decoding (prompt lookup), greedy', () => {
  it('gives token for token the output without it, alone, batched, under KV exhaustion, with stops inside accepted runs', async () => {
    let drafted = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          blocks: fc.integer({ min: 12, max: 80 }),
          blockSize: fc.constantFrom(2, 4, 8),
          maxNumSeqs: fc.integer({ min: 1, max: 6 }),
          extraBudget: fc.integer({ min: 0, max: 24 }),
          prefixCaching: fc.boolean(),
          tokens: fc.integer({ min: 1, max: 10 }),
          ngram: fc.integer({ min: 1, max: 4 }),
          requests: fc.array(
            fc.record({
              prompt: fc.stringMatching(/^[a-p ]{4,40}$/),
              maxTokens: fc.integer({ min: 1, max: 40 }),
              stop: fc.option(fc.array(fc.stringMatching(/^[a-p ]{1,3}$/), { minLength: 1, maxLength: 2 }), { nil: undefined }),
            }),
            { minLength: 1, maxLength: 6 },
          ),
        }),
        async (workload) => {
          const options = {
            blocks: workload.blocks,
            blockSize: workload.blockSize,
            backend: { rule: quotingRule },
            scheduler: { maxNumSeqs: workload.maxNumSeqs, maxNumBatchedTokens: workload.maxNumSeqs + workload.extraBudget, prefixCaching: workload.prefixCaching },
          };
          const plain = await harness(options);
          const spec = await harness(options);
          spec.backend.recordBatches = true;
          const speculative = { method: 'prompt-lookup' as const, tokens: workload.tokens, ngram: workload.ngram };
          const expected = await runAll(plain, workload.requests);
          const got = await runAll(spec, workload.requests, speculative);
          expect(got).toEqual(expected);
          for (const batch of spec.backend.steps) expect(batch.inputIds.length).toBeLessThanOrEqual(workload.maxNumSeqs + workload.extraBudget);
          const stats = spec.pipe.stats();
          expect(stats.running + stats.waiting).toBe(0);
          expect(stats.kv.pools[0]!.usedBlocks).toBe(0);
          drafted += stats.speculative!.drafted;
          accepted += stats.speculative!.accepted;
          await plain.pipe.close();
          await spec.pipe.close();
        },
      ),
      { numRuns: 80 },
    );
    // The workloads did speculate, and drafts were both kept and rejected.
    expect(accepted).toBeGreaterThan(0);
    expect(drafted).toBeGreaterThan(accepted);
  }, 120_000);

  it('verifies a draft as one chunk with a row per position, and reports drafted / accepted tokens', async () => {
    const h = await harness({ backend: { rule: quotingRule } });
    h.backend.recordBatches = true;
    const prompt = 'abcdefghi'.repeat(4);
    const result = await h.pipe.generate(prompt, { maxTokens: 30, temperature: 0, speculative: { method: 'prompt-lookup', tokens: 4, ngram: 2 } });
    expect(result.tokenIds).toEqual(h.expected(prompt, 30).slice(0, result.tokenIds.length));
    const verify = h.backend.steps.find((batch) => batch.logitsIndices.length > 1);
    expect(verify).toBeDefined();
    // One sequence, its pending token plus the draft in one chunk, a row for each.
    expect(verify!.pastLens.length).toBe(1);
    expect([...verify!.logitsIndices]).toEqual([...verify!.inputIds.keys()]);
    expect(verify!.argmaxRows?.every((flag) => flag === 1)).toBe(true);
    const usage = result.usage.speculative!;
    expect(usage.accepted).toBeGreaterThan(0);
    expect(usage.drafted).toBeGreaterThanOrEqual(usage.accepted);
    // Fewer steps than tokens: accepted drafts came without their own steps.
    const decodeSteps = h.backend.steps.length - 1;
    expect(decodeSteps).toBeLessThan(result.tokenIds.length - 1);
    expect(decodeSteps).toBe(result.tokenIds.length - 1 - usage.accepted);
    expect(h.pipe.stats().speculative).toEqual(usage);
    await h.pipe.close();
  });

  it('never emits past maxTokens or a stop token inside an accepted run', async () => {
    // A model that copies forever: every draft is right, so each limit falls inside a run.
    const copy = (context: readonly number[]): number => (context.length >= 60 ? EOS : context[context.length - 5]!);
    for (const maxTokens of [1, 2, 3, 7, 13]) {
      const h = await harness({ backend: { rule: copy } });
      const result = await h.pipe.generate('abcde', { maxTokens, temperature: 0, speculative: { method: 'prompt-lookup', tokens: 8, ngram: 1 } });
      expect(result.tokenIds).toEqual(h.expected('abcde', maxTokens));
      expect(result.finishReason).toBe('length');
      await h.pipe.close();
    }
    const h = await harness({ backend: { rule: copy } });
    const result = await h.pipe.generate('abcde', { maxTokens: 100, temperature: 0, speculative: { method: 'prompt-lookup', tokens: 8, ngram: 1 } });
    expect(result.tokenIds).toEqual(h.expected('abcde', 100));
    expect(result.tokenIds.at(-1)).toBe(EOS);
    expect(result.finishReason).toBe('stop');
    expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
    await h.pipe.close();
  });

  it('aborts mid-verify touch only the aborted request; nothing leaks', async () => {
    const h = await harness({ blocks: 40, backend: { rule: quotingRule, delayMs: 1 }, scheduler: { maxNumSeqs: 4 } });
    const speculative = { method: 'prompt-lookup' as const, tokens: 6, ngram: 2 };
    const prompts = Array.from({ length: 8 }, (_, i) => `${'abcdefghij'.slice(i)}${'klmnop abc'.repeat(2)}`);
    const controllers = prompts.map(() => new AbortController());
    const runs = prompts.map((prompt, i) => h.pipe.generate(prompt, { maxTokens: 40, temperature: 0, speculative, signal: controllers[i]!.signal }));
    // Abort every other request while steps (verify steps among them) are in flight.
    let steps = 0;
    h.pipe.on('step', () => {
      steps++;
      if (steps === 3) controllers[1]!.abort();
      if (steps === 5) setTimeout(() => controllers[3]!.abort(), 0); // lands while the next step computes
      if (steps === 9) controllers[5]!.abort();
    });
    const results = await Promise.allSettled(runs);
    results.forEach((result, i) => {
      if (i === 1 || i === 3 || i === 5) {
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(AbortError);
        return;
      }
      expect(result.status).toBe('fulfilled');
      if (result.status === 'fulfilled') expect(result.value.tokenIds).toEqual(h.expected(prompts[i]!, 40));
    });
    expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
    expect(h.pipe.stats().speculative!.accepted).toBeGreaterThan(0);
    await h.pipe.close();
  });

  it('as the pipeline default, applies to greedy and sampled requests (speculative-sampling.test.ts); false turns it off', async () => {
    const h = await harness({ backend: { rule: quotingRule }, speculative: { method: 'prompt-lookup' } });
    const prompt = 'abcdefghi'.repeat(3);
    const greedy = await h.pipe.generate(prompt, { maxTokens: 20, temperature: 0 });
    expect(greedy.usage.speculative!.drafted).toBeGreaterThan(0);
    const sampled = await h.pipe.generate(prompt, { maxTokens: 20, temperature: 0.8, seed: 1 });
    expect(sampled.usage.speculative!.drafted).toBeGreaterThan(0);
    const off = await h.pipe.generate(prompt, { maxTokens: 20, temperature: 0, speculative: false });
    expect(off.usage.speculative).toBeUndefined();
    expect(off.tokenIds).toEqual(greedy.tokenIds);
    await h.pipe.close();
  });
});

describe('speculative decoding in the engine loop', () => {
  it('leaves every request holding exactly its computed tokens after each step (S3, K1, K7)', async () => {
    const backend = new TestBackend({ rule: quotingRule });
    const kv = new KvCacheManager([{ name: 'attention', blockSize: 4, numBlocks: 24 }], { prefixCaching: true });
    await backend.allocateCache({ numBlocks: 24, blockSize: 4, precision: 'f32' });
    let checked = 0;
    const broken: unknown[] = []; // the engine drops what an observer throws: collected here
    const engine: Engine = new Engine({
      backend,
      kv,
      scheduler: { maxNumSeqs: 4, maxNumBatchedTokens: 40, policy: 'fcfs' },
      decoder: new ByteTokenizer(),
      eosTokenIds: [EOS],
      observer: {
        onStep: () => {
          // The engine's live requests (a test-only look inside): tables cover exactly what is computed.
          const live = (engine as unknown as { live: Map<number, Request> }).live;
          try {
            kv.checkInvariants(new Map([...live.values()].filter((r) => kv.has(r.id)).map((r) => [r.id, r.numComputed])));
          } catch (error) {
            broken.push(error);
          }
          checked++;
        },
      },
    });
    const finished = Array.from({ length: 6 }, (_, i) => {
      const prompt = [...new TextEncoder().encode(`${'abcdefghij'.slice(i)}klmnop abcdefghij`)];
      return new Promise<FinishInfo>((resolve) => {
        const added = engine.add(
          { promptTokenIds: prompt, sampling: GREEDY, stop: { maxTokens: 30, stopTokenIds: [], stopStrings: [], ignoreEos: false }, priority: 0, speculative: { method: 'prompt-lookup', tokens: 5, ngram: 2 } },
          { onDelta: () => {}, onFinish: resolve },
        );
        expect(added.ok).toBe(true);
      });
    });
    const infos = await Promise.all(finished);
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(5);
    expect(infos.every((info) => info.reason === 'stop' || info.reason === 'length')).toBe(true);
    expect(infos.reduce((sum, info) => sum + info.speculative!.accepted, 0)).toBeGreaterThan(0);
    expect(engine.stats().preemptions).toBeGreaterThan(0); // 23 blocks for 6 requests of up to 14: under pressure
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });
});

describe('speculative options', () => {
  const refusal = async (run: () => Promise<unknown>): Promise<InvalidOptionError> => {
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidOptionError);
    return error as InvalidOptionError;
  };

  it('refuses bad values with the option and the fix named', async () => {
    const h = await harness();
    const cases: [unknown, RegExp][] = [
      [{ method: 'draft' }, /speculative\.method: expected "prompt-lookup"/],
      [{ method: 'prompt-lookup', tokens: 0 }, /speculative\.tokens/],
      [{ method: 'prompt-lookup', ngram: 1.5 }, /speculative\.ngram/],
      [{ method: 'prompt-lookup', k: 3 }, /speculative/],
      ['prompt-lookup', /speculative: expected \{ method: 'prompt-lookup'/],
    ];
    for (const [speculative, message] of cases) {
      const error = await refusal(() => h.pipe.generate('ab', { speculative: speculative as never }));
      expect(error.message).toMatch(message);
    }
    await expect(harness({ speculative: { method: 'prompt-lookup', tokens: 100 } })).rejects.toThrow(/speculative\.tokens/);
    await h.pipe.close();
  });

  it('refuses speculation on a hybrid model, saying why (responseFormat: speculative-sampling.test.ts)', async () => {
    const speculative = { method: 'prompt-lookup' as const };
    const hybrid = { extraPools: [{ name: 'linear-state', blockSize: Infinity, bytesPerBlock: 256 }] };
    await expect(harness({ backend: hybrid, speculative })).rejects.toThrow(/recurrent state \(its linear-state pool\), which cannot be rolled back/);
    const h2 = await harness({ backend: hybrid });
    const error = await refusal(() => h2.pipe.generate('ab', { temperature: 0, speculative }));
    expect(error.option).toBe('speculative');
    await h2.pipe.close();
  });
});
