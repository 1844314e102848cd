// Greedy picks taken natively (native/src/cpu/kernels/argmax/argmax.h): both kernels pick
// what the engine's JavaScript scan picks (src/sampling/sampler.ts argmax) on
// rows made to catch a wrong rule (ties across lanes and the tail, -0 against
// +0, NaNs, infinities), and a step returns them for the rows asked for only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { argmax } from '../../src/sampling/sampler.js';
import { buildBatch, QWEN3_TINY } from './helpers.js';

const testing = loadNativeBinding().testing;

function random(seed: number): () => number {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

/** Rows where the rule matters, each with the index the scan must pick (checked by hand). */
const HAND_MADE: Array<[string, number[], number]> = [
  ['one value', [3], 0],
  ['a tie picks the first', [1, 5, 2, 5, 5], 1],
  ['-0 before +0 ties', [-0, 0, -1], 0],
  ['a NaN first wins nothing and keeps 0', [NaN, 9, 10], 0],
  ['NaNs later are passed over', [1, NaN, 3, NaN, 2], 2],
  ['all -Infinity', [-Infinity, -Infinity, -Infinity], 0],
  ['+Infinity', [1, Infinity, 2, Infinity], 1],
];

/** Rows of `n` values, some with the largest value repeated so that lanes and the tail tie. */
function rows(n: number, next: () => number): Float32Array[] {
  const plain = Float32Array.from({ length: n }, () => next() * 20 - 10);
  const tied = Float32Array.from({ length: n }, () => Math.floor(next() * 4));
  const late = Float32Array.from({ length: n }, (_, i) => (i === n - 1 ? 1 : 0));
  const sparseNaN = Float32Array.from({ length: n }, (_, i) => (i % 7 === 3 ? NaN : next()));
  const zeros = Float32Array.from({ length: n }, (_, i) => (i % 3 === 0 ? -0 : 0));
  return [plain, tied, late, sparseNaN, zeros];
}

describe('argmax kernels', () => {
  const kernels = (['baseline', 'avx2'] as const).filter((k) => testing.argmax(k, Float32Array.of(1)) !== null);

  it.each(HAND_MADE)('%s', (_, values, expected) => {
    const row = Float32Array.from(values);
    expect(argmax(row, 0, row.length)).toBe(expected);
    for (const kernel of kernels) expect(testing.argmax(kernel, row), kernel).toBe(expected);
  });

  it('agree with the JavaScript scan on rows of every length to 70, and at 151,936 values', () => {
    const next = random(7);
    for (const n of [...Array.from({ length: 70 }, (_, i) => i + 1), 151_936]) {
      for (const row of rows(n, next)) {
        const expected = argmax(row, 0, n);
        for (const kernel of kernels) expect(testing.argmax(kernel, row), `${kernel}, n = ${n}`).toBe(expected);
      }
    }
  });

  it('reject an empty row, other arrays and an unknown kernel', () => {
    expect(() => testing.argmax('baseline', new Float32Array(0))).toThrow(/1 to/);
    expect(() => testing.argmax('baseline', new Uint8Array(64) as unknown as Float32Array)).toThrow(/values must be a Float32Array/);
    expect(() => testing.argmax('avx512' as 'avx2', Float32Array.of(1))).toThrow(/'baseline' or 'avx2'/);
  });
});

describe('CPU backend: argmax of the rows asked for', () => {
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.load(QWEN3_TINY, { threads: 2 });
    await backend.allocateCache({ numBlocks: 8, blockSize: 4, precision: 'f32' });
  });
  afterAll(async () => backend.dispose());

  const steps = [
    { tokens: [10, 11, 12], pastLen: 0, blocks: [1] },
    { tokens: [20, 21], pastLen: 0, blocks: [2] },
    { tokens: [30], pastLen: 0, blocks: [3] },
  ];

  it('returns the scan pick for each asked row and -1 for the others', async () => {
    const result = await backend.execute({ ...buildBatch(steps), argmaxRows: Uint8Array.of(1, 0, 1) });
    const vocab = backend.shape.vocabSize;
    const scan = (row: number) => argmax(result.logits, row * vocab, (row + 1) * vocab);
    expect(Array.from(result.argmax!)).toEqual([scan(0), -1, scan(2)]);
    backend.release(result);
  });

  it('returns no argmax when none is asked for', async () => {
    const result = await backend.execute(buildBatch(steps));
    expect(result.argmax).toBeUndefined();
    backend.release(result);
  });
});
