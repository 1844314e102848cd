/**
 * Speculative decoding of sampled requests (src/engine/speculative.ts, S6):
 * the rejection rule leaves the target distribution unchanged, the seeded
 * stream makes the output a function of the seed alone (alone, batched,
 * preempted, with or without speculation), aborts mid-verify leak nothing,
 * and the counts report sampled requests.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lookupDraft } from '../../src/engine/speculative.js';
import { AbortError, InvalidOptionError } from '../../src/errors.js';
import type { GenerateOptions } from '../../src/pipeline/options.js';
import { harness, type Harness } from '../support/harness.js';

const SPECULATIVE = { method: 'prompt-lookup' as const, tokens: 4, ngram: 1 };

function fnv(context: readonly number[]): number {
  let hash = 2166136261;
  for (const token of context) hash = Math.imul(hash ^ token, 16777619);
  return hash >>> 0;
}

// ---------------------------------------------------------------------------
// (a) The distribution: exact target probabilities against many seeds.

/** The three tokens the statistical model writes: 'a', 'b', 'c'. */
const ABC = [97, 98, 99];
const VOCAB = 260;
/** A logit that no filter keeps (finite: an infinity is broken logits to the sampler). */
const NEVER = -1e4;

/** The model's raw logits for 'a', 'b', 'c' after `context`: a fixed function of its last two tokens, in [-2, 2). */
function abcLogits(context: readonly number[]): number[] {
  const hash = fnv(context.slice(-2));
  return ABC.map((_, i) => ((hash >>> (8 * i)) & 0xff) / 64 - 2);
}

function abcRow(context: readonly number[]): Float32Array {
  const row = new Float32Array(VOCAB).fill(NEVER);
  abcLogits(context).forEach((logit, i) => (row[ABC[i]!] = logit));
  return row;
}

interface Chain {
  temperature: number;
  topK?: number;
  topP?: number;
  minP?: number;
  repetitionPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
}

/**
 * The target distribution over 'a', 'b', 'c' after `prompt` + `generated`,
 * written from the documented order of the chain (penalties, temperature,
 * min-p, top-k, top-p; ties to the lower id), independently of the sampler.
 */
function target(chain: Chain, prompt: readonly number[], generated: readonly number[]): number[] {
  const { temperature, topK = 0, topP = 1, minP = 0, repetitionPenalty = 1, presencePenalty = 0, frequencyPenalty = 0 } = chain;
  const logits = abcLogits([...prompt, ...generated]).map((logit, i) => {
    const token = ABC[i]!;
    let value = Math.fround(logit);
    if ([...prompt, ...generated].includes(token)) value = value > 0 ? value / repetitionPenalty : value * repetitionPenalty;
    const count = generated.filter((t) => t === token).length;
    if (count > 0) value -= presencePenalty + frequencyPenalty * count;
    return value;
  });
  const max = Math.max(...logits);
  const weights = logits.map((logit) => Math.exp((logit - max) / temperature));
  const order = [0, 1, 2].sort((x, y) => weights[y]! - weights[x]! || x - y);
  let kept = order.filter((i) => weights[i]! >= minP);
  if (topK > 0) kept = kept.slice(0, topK);
  const total = kept.reduce((sum, i) => sum + weights[i]!, 0);
  let mass = 0;
  const byMass: number[] = [];
  for (const i of kept) {
    if (mass >= topP * total) break;
    byMass.push(i);
    mass += weights[i]!;
  }
  return [0, 1, 2].map((i) => (byMass.includes(i) ? weights[i]! / mass : 0));
}

/** Every sequence of `length` tokens from 'a', 'b', 'c', keyed by its text, with its probability under `step`. */
function sequences(length: number, step: (generated: readonly number[]) => number[]): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (generated: number[], probability: number): void => {
    if (generated.length === length) {
      out.set(String.fromCharCode(...generated), probability);
      return;
    }
    step(generated).forEach((p, i) => {
      if (p > 0) walk([...generated, ABC[i]!], probability * p);
    });
  };
  walk([], 1);
  return out;
}

function totalVariation(p: ReadonlyMap<string, number>, q: ReadonlyMap<string, number>): number {
  let sum = 0;
  for (const key of new Set([...p.keys(), ...q.keys()])) sum += Math.abs((p.get(key) ?? 0) - (q.get(key) ?? 0));
  return sum / 2;
}

/**
 * A total-variation distance the empirical distribution of `n` samples over
 * `k` categories exceeds with probability at most `delta` (Bretagnolle-Huber-
 * Carol: P(||p_hat - p||_1 >= l) <= 2^k exp(-n l^2 / 2)). An exact bound, no
 * asymptotic approximation: the test fails falsely with probability <= delta.
 */
function tvBound(k: number, n: number, delta: number): number {
  return Math.sqrt((2 * (k * Math.LN2 + Math.log(1 / delta))) / n) / 2;
}

const PROMPT = 'abcab';
const LENGTH = 3;
const SAMPLES = 8000;
const DELTA = 1e-6;

async function empirical(h: Harness, chain: Chain, speculative: boolean): Promise<{ counts: Map<string, number>; outputs: string[] }> {
  const outputs = await Promise.all(
    Array.from({ length: SAMPLES }, (_, seed) =>
      h.pipe.generate(PROMPT, { ...chain, seed, maxTokens: LENGTH, ignoreEos: true, speculative: speculative ? SPECULATIVE : false }).then((result) => result.text),
    ),
  );
  const counts = new Map<string, number>();
  for (const text of outputs) counts.set(text, (counts.get(text) ?? 0) + 1 / SAMPLES);
  return { counts, outputs };
}

describe('speculative sampling: the rejection rule leaves the distribution unchanged', () => {
  const chains: [string, Chain][] = [
    ['temperature 1', { temperature: 1 }],
    ['temperature 0.7, top-p 0.8', { temperature: 0.7, topP: 0.8 }],
    ['temperature 1.3, top-k 2, min-p 0.1, penalties', { temperature: 1.3, topK: 2, minP: 0.1, repetitionPenalty: 1.2, presencePenalty: 0.3, frequencyPenalty: 0.6 }],
  ];
  for (const [label, chain] of chains) {
    it(`matches the exact distribution of ${LENGTH}-token sequences, ${label} (${SAMPLES} seeds, false failure <= ${DELTA})`, async () => {
      // 256 requests at once, every one verifying its drafts (S7's row limit raised to allow it): the rule, not the policy, is under test.
      const h = await harness({ blocks: 4000, backend: { logits: abcRow }, scheduler: { maxNumSeqs: 256, maxNumBatchedTokens: 4096, speculativeRows: 4096 } });
      const prompt = h.tokenizer.encode(PROMPT);
      const exact = sequences(LENGTH, (generated) => target(chain, prompt, generated));
      const bound = tvBound(exact.size, SAMPLES, DELTA);

      const spec = await empirical(h, chain, true);
      const stats = h.pipe.stats().speculative!;
      // The rule was exercised: drafts were verified, and both accepted and rejected.
      expect(stats.drafted).toBeGreaterThan(SAMPLES / 2);
      expect(stats.accepted).toBeGreaterThan(0);
      expect(stats.accepted).toBeLessThan(stats.drafted);
      const plain = await empirical(h, chain, false);
      expect(totalVariation(spec.counts, exact)).toBeLessThan(bound);
      expect(totalVariation(plain.counts, exact)).toBeLessThan(bound);
      // The stream is consumed as without speculation (S6): seed for seed the same output.
      expect(spec.outputs).toEqual(plain.outputs);

      // The bound is tight enough to catch a wrong rule: resampling from p (not the residual)
      // after a rejection, at the one drafted position here (the second token; the first comes
      // from the prompt's step, the third is the bonus), shifts the distribution by more.
      const wrong = sequences(LENGTH, (generated) => {
        const p = target(chain, prompt, generated);
        if (generated.length !== 1) return p;
        const draft = ABC.indexOf(lookupDraft([...prompt, ...generated], SPECULATIVE.ngram, 1)[0]!);
        return p.map((pv, i) => (i === draft ? pv : 0) + (1 - p[draft]!) * pv);
      });
      expect(totalVariation(wrong, exact)).toBeGreaterThan(2 * bound);
      await h.pipe.close();
    }, 60_000);
  }
});

// ---------------------------------------------------------------------------
// (b)-(d) over the test backend's peaked rows (its default logits): the rule
// accepts most drafts of a model that mostly quotes its context.

const LETTERS = [...'abcdefghij klmnop'].map((c) => c.charCodeAt(0));

/** Mostly the token 9 back, sometimes a letter of the context's hash: drafts are often right. */
function quotingRule(context: readonly number[]): number {
  const hash = fnv(context);
  if (context.length < 9 || hash % 7 === 0) return LETTERS[(hash >>> 8) % LETTERS.length]!;
  return context[context.length - 9]!;
}

interface SampledRequest {
  prompt: string;
  maxTokens: number;
  seed: number;
  options: Partial<GenerateOptions>;
}

async function outcome(h: Harness, r: SampledRequest, speculative: boolean): Promise<unknown> {
  const result = await h.pipe.generate(r.prompt, { ...r.options, seed: r.seed, maxTokens: r.maxTokens, speculative: speculative ? SPECULATIVE : false });
  return { text: result.text, tokenIds: result.tokenIds, finishReason: result.finishReason, logprobs: result.logprobs };
}

describe('speculative sampling: the same seed gives the same output', () => {
  it('alone, batched, under KV pressure with preemptions, and without speculation', async () => {
    let preemptions = 0;
    let drafted = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          blocks: fc.integer({ min: 14, max: 60 }),
          maxNumSeqs: fc.integer({ min: 2, max: 6 }),
          requests: fc.array(
            fc.record({
              prompt: fc.stringMatching(/^[a-p ]{4,30}$/),
              maxTokens: fc.integer({ min: 1, max: 30 }),
              seed: fc.integer({ min: 0, max: 1 << 30 }),
              options: fc.record(
                {
                  temperature: fc.constantFrom(0.5, 1, 1.6),
                  topP: fc.constantFrom(1, 0.9),
                  topK: fc.constantFrom(0, 5),
                  minP: fc.constantFrom(0, 0.05),
                  frequencyPenalty: fc.constantFrom(0, 0.4),
                  repetitionPenalty: fc.constantFrom(1, 1.1),
                  logprobs: fc.constantFrom(0, 2),
                },
                { requiredKeys: ['temperature'] },
              ),
            }),
            { minLength: 2, maxLength: 6 },
          ),
        }),
        async (workload) => {
          const roomy = await harness({ blocks: 1000, backend: { rule: quotingRule } });
          const tight = await harness({ blocks: workload.blocks, backend: { rule: quotingRule }, scheduler: { maxNumSeqs: workload.maxNumSeqs, maxNumBatchedTokens: workload.maxNumSeqs + 8 } });
          const expected = await Promise.all(workload.requests.map((r) => outcome(roomy, r, false)));
          const alone: unknown[] = [];
          for (const r of workload.requests) alone.push(await outcome(roomy, r, true));
          const batched = await Promise.all(workload.requests.map((r) => outcome(tight, r, true)));
          expect(alone).toEqual(expected);
          expect(batched).toEqual(expected);
          const stats = tight.pipe.stats();
          expect(stats.kv.pools[0]!.usedBlocks).toBe(0);
          preemptions += stats.preemptions;
          drafted += stats.speculative!.drafted;
          accepted += stats.speculative!.accepted;
          await roomy.pipe.close();
          await tight.pipe.close();
        },
      ),
      { numRuns: 60 },
    );
    // The workloads preempted, and drafts were both kept and rejected.
    expect(preemptions).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
    expect(drafted).toBeGreaterThan(accepted);
  }, 120_000);

  it('verifies a sampled draft from raw logits: no argmax or backend sampling asked for its rows', async () => {
    const h = await harness({ backend: { rule: quotingRule } });
    h.backend.recordBatches = true;
    const prompt = 'abcdefghi'.repeat(4);
    const result = await h.pipe.generate(prompt, { maxTokens: 30, temperature: 0.8, seed: 7, speculative: SPECULATIVE });
    const verify = h.backend.steps.filter((batch) => batch.logitsIndices.length > 1);
    expect(verify.length).toBeGreaterThan(0);
    for (const batch of h.backend.steps) {
      expect(batch.argmaxRows).toBeUndefined();
      expect(batch.sampling).toBeUndefined();
    }
    expect(result.usage.speculative!.accepted).toBeGreaterThan(0);
    // Fewer steps than tokens: each accepted draft token came without a step of its own.
    expect(h.backend.steps.length - 1).toBe(result.tokenIds.length - 1 - result.usage.speculative!.accepted);
    await h.pipe.close();
  });
});

describe('speculative sampling: aborts, counts and options', () => {
  it('aborts mid-verify touch only the aborted request and leave zero blocks in use', async () => {
    const h = await harness({ blocks: 40, backend: { rule: quotingRule, delayMs: 1 }, scheduler: { maxNumSeqs: 4 } });
    const solo = await harness({ backend: { rule: quotingRule } });
    const prompts = Array.from({ length: 8 }, (_, i) => `${'abcdefghij'.slice(i)}${'klmnop abc'.repeat(2)}`);
    const options = (i: number) => ({ maxTokens: 40, temperature: 0.9, topP: 0.95, seed: 100 + i, speculative: SPECULATIVE });
    const controllers = prompts.map(() => new AbortController());
    const runs = prompts.map((prompt, i) => h.pipe.generate(prompt, { ...options(i), signal: controllers[i]!.signal }));
    let steps = 0;
    let verifying = 0;
    h.pipe.on('step', (info) => {
      steps++;
      if (info.scheduledTokens > info.scheduledRequests) verifying++;
      if (steps === 3) controllers[1]!.abort();
      if (steps === 5) setTimeout(() => controllers[3]!.abort(), 0); // lands while the next step computes
      if (steps === 9) controllers[5]!.abort();
    });
    const results = await Promise.allSettled(runs);
    for (const [i, result] of results.entries()) {
      if (i === 1 || i === 3 || i === 5) {
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(AbortError);
        continue;
      }
      expect(result.status).toBe('fulfilled');
      const alone = await solo.pipe.generate(prompts[i]!, { ...options(i), speculative: false });
      if (result.status === 'fulfilled') expect(result.value.tokenIds).toEqual(alone.tokenIds);
    }
    expect(verifying).toBeGreaterThan(0);
    expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
    expect(h.pipe.stats().running + h.pipe.stats().waiting).toBe(0);
    await h.pipe.close();
    await solo.pipe.close();
  });

  it('counts sampled requests in usage and stats; the pipeline default applies to them, not to guided ones', async () => {
    const h = await harness({ backend: { rule: quotingRule }, speculative: SPECULATIVE });
    const prompt = 'abcdefghi'.repeat(3);
    const sampled = await Promise.all([1, 2, 3].map((seed) => h.pipe.generate(prompt, { maxTokens: 24, temperature: 1, seed })));
    for (const result of sampled) {
      expect(result.usage.speculative!.drafted).toBeGreaterThan(0);
      expect(result.usage.speculative!.accepted).toBeLessThanOrEqual(result.usage.speculative!.drafted);
    }
    const sum = (key: 'drafted' | 'accepted') => sampled.reduce((total, result) => total + result.usage.speculative![key], 0);
    expect(h.pipe.stats().speculative).toEqual({ drafted: sum('drafted'), accepted: sum('accepted') });
    expect(sum('accepted')).toBeGreaterThan(0);
    const guided = await h.pipe.generate(prompt, { maxTokens: 8, temperature: 1, seed: 1, responseFormat: { type: 'json_object' } });
    expect(guided.usage.speculative).toBeUndefined();
    expect(h.pipe.stats().speculative).toEqual({ drafted: sum('drafted'), accepted: sum('accepted') });
    await h.pipe.close();
  });

  it('refuses speculative with responseFormat by name, saying why', async () => {
    const h = await harness();
    for (const temperature of [0, 0.8]) {
      const error = await h.pipe.generate('ab', { temperature, responseFormat: { type: 'json_object' }, speculative: SPECULATIVE }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe('speculative');
      expect((error as InvalidOptionError).message).toMatch(/responseFormat/);
    }
    await h.pipe.close();
  });
});
