/**
 * The native sampling chain (native/src/cpu/sample/sampler.h) against the JS
 * sampler it mirrors (src/sampling/sampler.ts): for the same seed and rows, the
 * same tokens, the same log probabilities and the same random stream, step
 * after step (so the penalty counts and the Rng advance alike), in every
 * kernel set, on every parameter combination and edge.
 */
import { describe, expect, it } from 'vitest';
import { SAMPLING_PARAMS, type SampledRows } from '../../src/backends/backend.js';
import { loadNativeBinding, type SampleKernelsName } from '../../src/backends/cpu/native-binding.js';
import { GREEDY, type SamplingParams } from '../../src/sampling/params.js';
import { Rng } from '../../src/sampling/rng.js';
import { applyMask } from '../../src/guided/grammar.js';
import { NonFiniteLogitsError, Sampler, allFinite, argmax, type SampledToken } from '../../src/sampling/sampler.js';

const testing = loadNativeBinding().testing;
// Every set of row passes this CPU runs ('avx512' with the avx512vnni kernel set); the baseline always.
const KERNELS = (['baseline', 'avx2', 'avx512'] as const).filter((kernel) => testing.sampleRow(kernel, Float32Array.of(0), new Float64Array(SAMPLING_PARAMS), new Int32Array(0), new Int32Array(0), new Int32Array(0)) !== null);

type Outcome = SampledToken | 'non-finite';

/** The JS sampler runs each case once per set of row passes (three on an AVX-512 host): the long tests get room for a busy host. */
const SLOW = 240_000;

function jsStep(sampler: Sampler, row: Float32Array): Outcome {
  try {
    return sampler.sample(Float32Array.from(row), 0, row.length);
  } catch (error) {
    if (error instanceof NonFiniteLogitsError) return 'non-finite';
    throw error;
  }
}

/** The engine's guided path (token-choice.ts): the raw row checked, masked, then argmax or the sampler. */
function jsMaskedStep(sampler: Sampler, row: Float32Array, mask: Uint32Array): Outcome {
  const copy = Float32Array.from(row);
  if (!allFinite(copy)) return 'non-finite';
  applyMask(copy, 0, copy.length, mask);
  return sampler.isPlainGreedy ? { token: argmax(copy, 0, copy.length) } : sampler.sample(copy, 0, copy.length, { masked: true });
}

function nativeStep(kernel: SampleKernelsName, sampler: Sampler, row: Float32Array, mask?: Uint32Array): Outcome {
  const params = new Float64Array(SAMPLING_PARAMS);
  sampler.writeParams(params, 0);
  const counts = [...sampler.outputTokenCounts];
  const values = Float32Array.from(row);
  const result = testing.sampleRow(
    kernel,
    values,
    params,
    Int32Array.from(sampler.seenTokens),
    Int32Array.from(counts, ([token]) => token),
    Int32Array.from(counts, ([, count]) => count),
    mask,
  )!;
  // The penalties are undone: the logits go back to JavaScript as the model gave them (masked, with a mask).
  const expected = Float32Array.from(row);
  if (mask !== undefined && allFinite(row)) applyMask(expected, 0, expected.length, mask);
  expect(values).toEqual(expected);
  if ((result.flags & 4) !== 0) return 'non-finite';
  expect(result.flags & 1).toBe(1);
  const sampled: SampledRows = {
    tokens: Int32Array.of(result.token),
    flags: Uint8Array.of(result.flags),
    stats: Float64Array.of(result.max, result.sum),
    top: result.top,
    topWidth: result.top.length,
  };
  return sampler.takeSampled(sampled, 0, values, 0);
}

/** Rows of `vocab` logits of one kind, from a seeded stream. */
type RowKind = 'flat' | 'peaked' | 'ties' | 'spread' | 'tiny' | 'huge' | 'nan' | '-inf' | '+inf' | 'all -inf';
const ROW_KINDS: RowKind[] = ['flat', 'peaked', 'ties', 'spread', 'tiny', 'huge', 'nan', '-inf', '+inf', 'all -inf'];

function makeRow(kind: RowKind, vocab: number, rng: Rng): Float32Array {
  const row = new Float32Array(vocab);
  for (let i = 0; i < vocab; i++) {
    const u = rng.next();
    switch (kind) {
      case 'flat':
        row[i] = u * 4 - 2;
        break;
      case 'peaked':
        row[i] = (u + rng.next() + rng.next() - 1.5) * 6 + (i % 97 === 0 ? 8 : 0);
        break;
      case 'ties':
        row[i] = Math.round(u * 6) / 2;
        break;
      case 'spread':
        row[i] = (u - 0.5) * 2000;
        break;
      case 'tiny':
        row[i] = (u - 0.5) * 1e-30;
        break;
      case 'huge':
        row[i] = (u - 0.5) * 6e38;
        break;
      default:
        row[i] = u * 4 - 2;
    }
  }
  const at = Math.floor(rng.next() * vocab);
  if (kind === 'nan') row[at] = NaN;
  if (kind === '-inf') row[at] = -Infinity;
  if (kind === '+inf') row[at] = Infinity;
  if (kind === 'all -inf') row.fill(-Infinity);
  return row;
}

/** Runs `steps` steps of one request both ways and expects the same outcomes. */
function expectSame(params: SamplingParams, rows: readonly Float32Array[], prompt: readonly number[], label: string): void {
  for (const kernel of KERNELS) {
    const js = new Sampler(params, prompt);
    const native = new Sampler(params, prompt);
    for (let step = 0; step < rows.length; step++) {
      const expected = jsStep(js, rows[step]!);
      const actual = nativeStep(kernel, native, rows[step]!);
      if (!Object.is(expected, actual)) expect(actual, `${label}, ${kernel}, step ${step}`).toEqual(expected);
    }
  }
}

const base = (overrides: Partial<SamplingParams>): SamplingParams => ({ ...GREEDY, temperature: 1, seed: 7, ...overrides });

describe('native sampling chain', () => {
  it('runs the AVX-512 row passes wherever the avx512vnni kernel set runs', () => {
    expect(KERNELS.includes('avx512')).toBe(testing.supportedKernelSets().includes('avx512vnni'));
    expect(KERNELS.includes('avx2')).toBe(testing.supportedKernelSets().includes('avx2'));
  });

  it('computes exp and log as V8 does (Math.exp, Math.log), bit for bit, in every kernel set', () => {
    const rng = new Rng(3);
    const x = new Float64Array(200_000);
    for (let i = 0; i < x.length; i++) {
      const u = rng.next();
      x[i] = i % 4 === 0 ? -u * 30 : i % 4 === 1 ? (u - 0.5) * 3 : i % 4 === 2 ? (u - 0.5) * 1500 : (u - 0.5) * 1e-7;
    }
    x.set([1, NaN, -Infinity, Infinity, 0, -0, -745.2, 709.9, -708.5, Math.LN2 / 2, -1.5 * Math.LN2], 0);
    for (const kernel of KERNELS) {
      const out = testing.jsExp(kernel, x)!;
      const wrong = [...x].filter((v, i) => !Object.is(out[i], Math.exp(v)));
      expect(wrong, kernel).toEqual([]);
    }
    const y = x.map((v) => Math.abs(v) * 1e3);
    const logs = testing.jsLog(y);
    expect([...y].filter((v, i) => !Object.is(logs[i], Math.log(v)))).toEqual([]);
  });

  it('gives the JS sampler tokens on every combination of temperature, top-k, top-p and min-p, with penalties and logprobs', () => {
    const vocab = 3000;
    const rng = new Rng(11);
    const choose = <T>(values: readonly T[]): T => values[Math.floor(rng.next() * values.length)]!;
    let combos = 0;
    for (const temperature of [0, 1e-7, 0.05, 0.7, 1, 3])
      for (const topK of [0, 1, 7, vocab + 5])
        for (const topP of [1, 0.9, 1e-12])
          for (const minP of [0, 0.1, 1]) {
            const params = base({
              temperature,
              topK,
              topP,
              minP,
              repetitionPenalty: choose([1, 1.3, 0.6]),
              presencePenalty: choose([0, 0.7, -1.5]),
              frequencyPenalty: choose([0, 0.4]),
              logprobs: choose([0, 1, 5]),
              seed: combos,
            });
            const kind = choose(['flat', 'peaked', 'ties', 'spread'] as const);
            const rows = [0, 1, 2].map(() => makeRow(kind, vocab, rng));
            expectSame(params, rows, [3, 5, 3, 2999, 10], `T ${temperature} k ${topK} p ${topP} minP ${minP} ${kind}`);
            combos++;
          }
    expect(combos).toBe(216);
  }, SLOW);

  it('gives the JS sampler tokens on every combination of penalties and logprobs', () => {
    const vocab = 2000;
    const rng = new Rng(5);
    for (const repetitionPenalty of [1, 1.5, 0.5, 100])
      for (const presencePenalty of [0, 0.8, -2])
        for (const frequencyPenalty of [0, 0.5, -0.25])
          for (const logprobs of [0, 1, 20])
            for (const temperature of [0, 0.8]) {
              const params = base({ temperature, topP: 0.95, repetitionPenalty, presencePenalty, frequencyPenalty, logprobs, seed: 99 });
              const rows = [0, 1, 2, 3].map(() => makeRow('peaked', vocab, rng));
              expectSame(params, rows, [1, 1, 7, 1999, 4000], `rep ${repetitionPenalty} pres ${presencePenalty} freq ${frequencyPenalty} lp ${logprobs} T ${temperature}`);
            }
  }, SLOW);

  it('refuses NaN and infinite rows as the JS sampler does, and agrees on tiny, huge and tied rows', () => {
    const vocab = 1500;
    const rng = new Rng(8);
    for (const kind of ROW_KINDS)
      for (const params of [
        base({ temperature: 0.7, topP: 0.9 }),
        base({ temperature: 0, logprobs: 3 }),
        base({ temperature: 1, topK: 40, logprobs: 5, repetitionPenalty: 0.5 }),
        base({ temperature: 1e-6, minP: 1, repetitionPenalty: 1.2, presencePenalty: 1 }),
        base({ temperature: 2, topP: 1e-9, frequencyPenalty: 100 }),
      ]) {
        const rows = [0, 1, 2].map(() => makeRow(kind, vocab, rng));
        expectSame(params, rows, [0, 1, 2, 3], `${kind} ${JSON.stringify(params)}`);
      }
  });

  it('agrees over a 151,936-token vocabulary (the partial selections of a real size)', () => {
    const rng = new Rng(21);
    const vocab = 151_936;
    for (const params of [
      base({ temperature: 0.7, topP: 0.9 }),
      base({ temperature: 0.7, topK: 40 }),
      base({ temperature: 0.8, topP: 0.95, minP: 0.05, repetitionPenalty: 1.1, logprobs: 5 }),
    ]) {
      const rows = [makeRow('flat', vocab, rng), makeRow('peaked', vocab, rng)];
      expectSame(params, rows, [10, 20, 151_935], JSON.stringify(params));
    }
  }, SLOW);

  it('finds the penalised row\'s max as a pass over it would: the top token penalised, tied, or overtaken by a penalised one', () => {
    // The chain takes the penalised max from the row's max and the penalised tokens (sampler.cc penalised_max):
    // these rows put the top token under the penalties, tie it, or lift a penalised token over it.
    const vocab = 4099;
    const rng = new Rng(31);
    const cases: [string, (row: Float32Array) => number[]][] = [
      ['top token penalised', (row) => [row.indexOf(Math.max(...row))]],
      ['top value tied by an unpenalised token', (row) => {
        const top = row.indexOf(Math.max(...row));
        row[(top + 7) % vocab] = row[top]!;
        return [top];
      }],
      ['top value tied by a penalised token', (row) => {
        const top = row.indexOf(Math.max(...row));
        row[(top + 7) % vocab] = row[top]!;
        return [top, (top + 7) % vocab];
      }],
      ['penalised tokens below the top', (row) => {
        const top = row.indexOf(Math.max(...row));
        return [(top + 1) % vocab, (top + 2) % vocab, 5];
      }],
    ];
    for (const [label, penalise] of cases)
      for (const kind of ['flat', 'peaked', 'ties'] as const)
        for (const overrides of [
          { repetitionPenalty: 1.3 },
          // These lift penalised logits (one may overtake the top); min-p's cut is relative to the max, so a
          // wrong max changes the candidates, not only their scale.
          { repetitionPenalty: 0.4, minP: 0.3 },
          { presencePenalty: -3, frequencyPenalty: -0.5, minP: 0.3 },
          { presencePenalty: 0.5, repetitionPenalty: 1.1, logprobs: 3 },
        ]) {
          const row = makeRow(kind, vocab, rng);
          const tokens = penalise(row);
          // The same tokens as prompt (repetition) and as output (presence / frequency): the JS Sampler's lists.
          const params = base({ temperature: 0.9, topP: 0.95, seed: tokens[0]!, ...overrides });
          for (const kernel of KERNELS) {
            const js = new Sampler(params, tokens);
            const native = new Sampler(params, tokens);
            for (const token of tokens)
              for (const sampler of [js, native]) {
                // Records an output token (the penalties' counts), leaving the random stream where it is (flags 0).
                const one = { tokens: Int32Array.of(token), flags: Uint8Array.of(0), stats: Float64Array.of(0, 1), top: new Int32Array(8), topWidth: 8 };
                sampler.takeSampled(one, 0, row, 0);
              }
            const expected = jsStep(js, row);
            const actual = nativeStep(kernel, native, row);
            if (!Object.is(expected, actual)) expect(actual, `${label}, ${kind}, ${JSON.stringify(overrides)}, ${kernel}`).toEqual(expected);
          }
        }
  });

  it('agrees on a 151,936-token row of ties (the selections\' equal-weight paths at a real size)', () => {
    const rng = new Rng(23);
    const rows = [makeRow('ties', 151_936, rng)];
    for (const params of [base({ temperature: 0.7, topP: 0.9 }), base({ temperature: 0.7, topK: 40 })])
      expectSame(params, rows, [1, 2, 3], `ties ${JSON.stringify(params)}`);
  }, SLOW);

  it('masks guided rows before the chain as the engine does, all-masked rows included', () => {
    const vocab = 2500;
    const rng = new Rng(17);
    const words = (vocab + 31) >>> 5;
    const masks: Record<string, Uint32Array> = {
      all: new Uint32Array(words).fill(0xffffffff),
      half: Uint32Array.from({ length: words }, () => (rng.next() * 2 ** 32) >>> 0),
      sparse: Uint32Array.from({ length: words }, () => (rng.next() < 0.05 ? 1 << Math.floor(rng.next() * 32) : 0)),
      one: (() => {
        const m = new Uint32Array(words);
        m[40] = 1 << 7;
        return m;
      })(),
      none: new Uint32Array(words),
    };
    for (const [name, mask] of Object.entries(masks))
      for (const kind of ['flat', 'peaked', 'nan', 'all -inf'] as const)
        for (const params of [
          GREEDY,
          base({ temperature: 0.7, topP: 0.9 }),
          base({ temperature: 0, logprobs: 4 }),
          base({ temperature: 1, topK: 5, minP: 0.1, logprobs: 3, repetitionPenalty: 1.4, frequencyPenalty: 0.5 }),
          base({ temperature: 1e-7, topP: 1e-9, presencePenalty: 2 }),
        ])
          for (const kernel of KERNELS) {
            const js = new Sampler(params, [1, 2, 3]);
            const native = new Sampler(params, [1, 2, 3]);
            for (let step = 0; step < 3; step++) {
              const row = makeRow(kind, vocab, rng);
              const expected = jsMaskedStep(js, row, mask);
              const actual = nativeStep(kernel, native, row, mask);
              if (!Object.is(expected, actual)) expect(actual, `${name} ${kind} ${kernel} ${JSON.stringify(params)} step ${step}`).toEqual(expected);
            }
          }
  }, SLOW);

  it('uses the random number exactly when the JS sampler draws', () => {
    const row = makeRow('flat', 500, new Rng(2));
    for (const [params, draws] of [
      [base({ temperature: 0.9 }), true],
      [base({ temperature: 0, logprobs: 2 }), false],
      [base({ temperature: 1, topK: 1, repetitionPenalty: 1.2 }), false],
    ] as const) {
      const p = new Float64Array(SAMPLING_PARAMS);
      new Sampler(params, []).writeParams(p, 0);
      const result = testing.sampleRow('baseline', Float32Array.from(row), p, new Int32Array(0), new Int32Array(0), new Int32Array(0))!;
      expect((result.flags & 2) !== 0).toBe(draws);
    }
  });
});
