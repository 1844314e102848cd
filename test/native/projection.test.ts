// Projections (native/src/cpu/kernels/matmul.h `project`): several matrices on one
// input, as the forward pass runs q/k/v and gate/up. Each part's output must
// be, bit for bit, what a matmul of that part alone gives, whatever the kernel
// set, token count or thread count, and whether the parts share one pass
// (float; one row-grouped type, tails packed beforehand or per call) or go one
// by one (k-quants, mixed block types, float and block parts together).
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { floatToHalfTruncated } from '../model-files/safetensors-writer.js';
import { type Format, randomRows, rng } from './quant-blocks.js';

const testing = loadNativeBinding().testing;
const sets = testing.supportedKernelSets();

type Dtype = 'F32' | 'F16' | 'BF16' | Format;
interface Part { dtype: Dtype; weights: Float32Array | Uint16Array | Uint8Array; N: number; bias?: Float32Array; packTail?: boolean; sextets?: boolean }

function random(n: number, seed: number, scale: number): Float32Array {
  const r = rng(seed);
  return Float32Array.from({ length: n }, () => (r() - 0.5) * scale * (r() < 0.05 ? 10 : 1));
}

function part(dtype: Dtype, N: number, K: number, seed: number, options: { bias?: boolean; packTail?: boolean; sextets?: boolean } = {}): Part {
  const bias = options.bias ? random(N, seed + 1, 1) : undefined;
  if (dtype === 'F32' || dtype === 'F16' || dtype === 'BF16') {
    const values = random(N * K, seed, 0.2);
    const weights =
      dtype === 'F32' ? values : Uint16Array.from(values, dtype === 'F16' ? floatToHalfTruncated : (f) => (new Uint32Array(Float32Array.of(f).buffer)[0] as number) >>> 16);
    return { dtype, weights, N, bias, sextets: options.sextets };
  }
  return { dtype, weights: randomRows(dtype, N, K, seed), N, bias, packTail: options.packTail };
}

/** The part alone, through the single-matrix test hooks. */
function alone(set: (typeof sets)[number], p: Part, input: Float32Array, T: number, K: number): Float32Array {
  if (p.dtype === 'F32' || p.dtype === 'F16' || p.dtype === 'BF16')
    return testing.floatMatmul(set, p.dtype, p.weights as Float32Array | Uint16Array, input, p.bias ?? null, T, p.N, K, 1);
  return testing.quantMatmul(set, p.dtype, p.weights as Uint8Array, input, T, p.N, K, 1, p.bias);
}

function expectLikeAlone(parts: Part[], K: number, tokens: number[]): void {
  for (const set of sets)
    for (const T of tokens) {
      const input = random(T * K, 97 * T + K, 2);
      const expected = parts.map((p) => alone(set, p, input, T, K));
      for (const threads of [1, 3]) {
        const got = testing.project(set, parts, input, T, K, threads);
        expect(got.length).toBe(parts.length);
        got.forEach((out, i) => expect(out, `${set}, T = ${T}, ${threads} threads, part ${i} (${parts[i]!.dtype})`).toEqual(expected[i]));
      }
    }
}

const tokens = [1, 2, 5, 9, 17, 40];

describe('a projection gives each part exactly its own matmul', () => {
  it('float parts in one pass: q/k/v-like F16 with biases, small (inline) and large (threaded) shapes', () => {
    expectLikeAlone([part('F16', 37, 200, 1, { bias: true }), part('F16', 13, 200, 2), part('F16', 13, 200, 3, { bias: true })], 200, tokens);
    expectLikeAlone([part('F16', 96, 1024, 4), part('F16', 48, 1024, 5, { bias: true }), part('F16', 48, 1024, 6)], 1024, [1, 3, 9]);
  });

  it('float parts of different types (F32, BF16, F16) share a pass', () => {
    expectLikeAlone([part('F32', 29, 72, 7, { bias: true }), part('BF16', 64, 72, 8), part('F16', 3, 72, 9)], 72, tokens);
  });

  // The loader keeps 16-bit matrices read into memory in sextets (native/src/cpu/kernels/float/sextets.h);
  // `alone` computes the same rows from the row-major copy.
  it('16-bit parts kept in sextets: whole sextets, a row-major tail of N % 6 rows, with biases, one pass', () => {
    expectLikeAlone([part('F16', 37, 200, 23, { bias: true, sextets: true }), part('BF16', 16, 200, 24, { sextets: true }), part('F16', 5, 200, 25, { sextets: true })], 200, tokens);
    // Above 16 tokens each token tile passes a whole chunk of rows (several chunks, several tiles here).
    expectLikeAlone([part('F16', 96, 1024, 26, { sextets: true }), part('BF16', 50, 1024, 27, { bias: true, sextets: true }), part('F32', 48, 1024, 28)], 1024, [1, 3, 4, 9, 17, 40]);
    expectLikeAlone([part('F16', 400, 256, 31, { bias: true, sextets: true })], 256, [17, 33]);
  });

  it('sextets refuse matrices whose K is not a multiple of 8, and float32 weights', () => {
    const input = random(2 * 36, 1, 1);
    expect(() => testing.project(sets[0]!, [part('F16', 8, 36, 29, { sextets: true })], input, 2, 36, 1)).toThrow(/K % 8 == 0/);
    expect(() => testing.project(sets[0]!, [part('F32', 8, 40, 30, { sextets: true })], random(80, 1, 1), 2, 40, 1)).toThrow(/F16 or BF16/);
  });

  it.each(['Q8_0', 'Q4_0'] as const)('%s parts in one pass, tails packed beforehand (as at load) or per call', (format) => {
    expectLikeAlone(
      [part(format, 37, 288, 10, { bias: true, packTail: true }), part(format, 13, 288, 11), part(format, 21, 288, 12, { packTail: true })],
      288,
      tokens,
    );
    // Rows past one pass over K (1024 weights), whole groups and a tail, enough work to be threaded.
    expectLikeAlone([part(format, 64, 1056, 13), part(format, 61, 1056, 14, { bias: true, packTail: true })], 1056, [1, 4, 9]);
  });

  it('k-quant parts (one matmul each), mixed block types and float with block parts', () => {
    expectLikeAlone([part('Q4_K', 24, 512, 15, { bias: true }), part('Q6_K', 16, 512, 16), part('Q4_K', 8, 512, 17)], 512, [1, 3, 17]);
    expectLikeAlone([part('Q8_0', 19, 256, 18, { packTail: true }), part('Q4_0', 16, 256, 19), part('Q6_K', 9, 256, 20)], 256, [1, 6]);
    expectLikeAlone([part('F16', 11, 256, 21, { bias: true }), part('Q8_0', 27, 256, 22)], 256, [1, 6]);
  });
});
