import { describe, expect, it } from 'vitest';
import { GREEDY, type SamplingParams } from '../../src/sampling/params.js';
import { Rng } from '../../src/sampling/rng.js';
import { Sampler, argmax } from '../../src/sampling/sampler.js';

const LOGITS = Float32Array.from([1, 3, 2.5, -1, 0, 2.9]); // order: 1 > 5 > 2 > 0 > 4 > 3

function params(overrides: Partial<SamplingParams>): SamplingParams {
  return { ...GREEDY, temperature: 1, ...overrides };
}

function draws(overrides: Partial<SamplingParams>, count = 400): Map<number, number> {
  const seen = new Map<number, number>();
  for (let seed = 0; seed < count; seed++) {
    const token = new Sampler(params({ ...overrides, seed }), []).sample(Float32Array.from(LOGITS), 0, LOGITS.length).token;
    seen.set(token, (seen.get(token) ?? 0) + 1);
  }
  return seen;
}

describe('Sampler', () => {
  it('greedy picks the argmax, first on ties, at any row offset', () => {
    const rows = Float32Array.from([0, 9, 9, 1, /* row 2: */ 5, 1, 7, 7]);
    expect(argmax(rows, 0, 4)).toBe(1);
    expect(new Sampler(GREEDY, []).sample(rows, 4, 4).token).toBe(2);
  });

  it('temperature sampling follows the softmax distribution', () => {
    const seen = draws({}, 4000);
    const probabilities = softmax([...LOGITS]);
    for (const [token, count] of seen) expect(Math.abs(count / 4000 - probabilities[token]!)).toBeLessThan(0.03);
  });

  it('top-k keeps only the k most likely tokens', () => {
    expect([...draws({ topK: 2 }).keys()].sort()).toEqual([1, 5]);
    expect([...draws({ topK: 1 }).keys()]).toEqual([1]);
  });

  it('top-p keeps the smallest set reaching p', () => {
    const probabilities = softmax([...LOGITS]);
    // p just above the top token's probability: exactly two tokens survive.
    expect([...draws({ topP: probabilities[1]! + 0.01 }).keys()].sort()).toEqual([1, 5]);
    expect([...draws({ topP: probabilities[1]! - 0.01 }).keys()]).toEqual([1]);
  });

  it('min-p drops tokens below min-p times the top probability', () => {
    // exp(2.5 - 3) = 0.61 relative; exp(1 - 3) = 0.14 relative.
    expect([...draws({ minP: 0.5 }).keys()].sort()).toEqual([1, 2, 5]);
  });

  it('min-p and top-p work on a real vocabulary size (150k) without blowing the stack', () => {
    const vocab = 151_936;
    const row = new Float32Array(vocab).map((_, i) => Math.sin(i) * 4);
    const sampler = new Sampler(params({ minP: 0.05, topP: 0.9, seed: 3 }), []);
    const { token } = sampler.sample(Float32Array.from(row), 0, vocab);
    const max = row.reduce((m, v) => Math.max(m, v), -Infinity);
    expect(Math.exp(row[token]! - max)).toBeGreaterThanOrEqual(0.05);
  });

  it('the same seed gives the same stream; different seeds differ', () => {
    const run = (seed: number): number[] => {
      const sampler = new Sampler(params({ seed }), []);
      return Array.from({ length: 30 }, () => sampler.sample(Float32Array.from(LOGITS), 0, LOGITS.length).token);
    };
    expect(run(42)).toEqual(run(42));
    expect(run(42)).not.toEqual(run(43));
  });

  it('repetition penalty demotes tokens of the prompt and output', () => {
    const sampler = new Sampler({ ...GREEDY, repetitionPenalty: 2 }, [1]);
    expect(sampler.sample(Float32Array.from(LOGITS), 0, LOGITS.length).token).toBe(5); // 3/2 < 2.9
    expect(sampler.sample(Float32Array.from(LOGITS), 0, LOGITS.length).token).toBe(2); // 5 now seen too
  });

  it('frequency penalties grow with each occurrence, presence penalties do not', () => {
    const run = (overrides: Partial<SamplingParams>): number[] => {
      const sampler = new Sampler({ ...GREEDY, ...overrides }, []);
      return Array.from({ length: 4 }, () => sampler.sample(Float32Array.from(LOGITS), 0, LOGITS.length).token);
    };
    // frequency 0.3: 3 -> 2.7 (< 2.9), then 2.9 -> 2.6, so 1 again at 2.7; then 1 -> 2.4 and 5 wins at 2.6.
    expect(run({ frequencyPenalty: 0.3 })).toEqual([1, 5, 1, 5]);
    // presence 0.45: 1 stays at 2.55 however often it was used.
    expect(run({ presencePenalty: 0.45 })).toEqual([1, 5, 1, 1]);
  });

  it('reports raw log probabilities and the top n', () => {
    const sampled = new Sampler({ ...GREEDY, logprobs: 3 }, []).sample(Float32Array.from(LOGITS), 0, LOGITS.length);
    const logSoftmax = softmax([...LOGITS]).map(Math.log);
    expect(sampled.token).toBe(1);
    expect(sampled.logprob).toBeCloseTo(logSoftmax[1]!, 5);
    expect(sampled.topLogprobs!.map((t) => t.token)).toEqual([1, 5, 2]);
    expect(sampled.topLogprobs![2]!.logprob).toBeCloseTo(logSoftmax[2]!, 5);
  });
});

describe('Rng', () => {
  it('is uniform enough and reproducible', () => {
    const rng = new Rng(7);
    const values = Array.from({ length: 10_000 }, () => rng.next());
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.01);
    expect(new Rng(7).next()).toBe(values[0]);
  });
});

function softmax(values: number[]): number[] {
  const max = Math.max(...values);
  const exps = values.map((v) => Math.exp(v - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}
