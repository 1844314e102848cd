// Q8_0 and Q4_0 matrices in row groups (native/src/cpu/kernels/quant/quant_repack.h,
// quant_group_kernels.h):
//  - repacking GGUF rows into groups of 8 and unpacking any row again gives
//    the GGUF bytes back, for row counts with and without a tail group;
//  - the baseline kernel equals, bit for bit, an independent computation of
//    the documented order written here from the GGUF bytes (so a packing bug
//    that every kernel set shares cannot hide behind their agreement);
//  - every supported kernel set equals the baseline bit for bit on odd shapes:
//    tail groups, K not a multiple of 256, K past one pass (1024 weights),
//    1..70 tokens, with and without a bias, 1 and 3 threads.
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { halfToFloat } from '../model-files/safetensors-writer.js';
import { FORMATS, randomRows, rng } from './quant-blocks.js';

const testing = loadNativeBinding().testing;
const f32 = Math.fround;
const FORMATS_GROUPED = ['Q8_0', 'Q4_0'] as const;
type Grouped = (typeof FORMATS_GROUPED)[number];

function randomInput(T: number, K: number, seed: number): Float32Array {
  const r = rng(seed);
  const x = Float32Array.from({ length: T * K }, () => (r() - 0.5) * (r() < 0.05 ? 20 : 2));
  x.fill(0, 0, Math.min(32, x.length)); // an all-zero block (scale 0)
  return x;
}

/** Round to nearest, ties to even (nearbyint in the default mode). */
function roundEven(y: number): number {
  const f = Math.floor(y), diff = y - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** The activation quantizer of quant.cc, per 32-block, in float32 steps. */
function quantizeInput(x: Float32Array): { q: Int8Array; scale: Float32Array } {
  const q = new Int8Array(x.length), scale = new Float32Array(x.length / 32);
  for (let u = 0; u < x.length / 32; u++) {
    let amax = 0;
    for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[u * 32 + i] as number));
    const s = f32(amax / 127), inv = s > 0 ? f32(1 / s) : 0;
    for (let i = 0; i < 32; i++) q[u * 32 + i] = Math.max(-127, Math.min(127, roundEven(f32((x[u * 32 + i] as number) * inv))));
    scale[u] = s;
  }
  return { q, scale };
}

/** out = sum over units, in order, of (d * xs) * (exact integer dot product), then + bias; every step rounded to float32. */
function reference(format: Grouped, w: Uint8Array, input: Float32Array, T: number, N: number, K: number, bias?: Float32Array): Float32Array {
  const { bytes } = FORMATS[format], units = K / 32, rowBytes = units * bytes;
  const out = new Float32Array(T * N);
  for (let t = 0; t < T; t++) {
    const { q, scale } = quantizeInput(input.subarray(t * K, (t + 1) * K));
    for (let n = 0; n < N; n++) {
      let acc = 0;
      for (let u = 0; u < units; u++) {
        const b = n * rowBytes + u * bytes;
        const d = halfToFloat((w[b] as number) | ((w[b + 1] as number) << 8));
        let p = 0;
        for (let i = 0; i < 32; i++) {
          const byte = w[b + 2 + (format === 'Q8_0' ? i : i % 16)] as number;
          const wq = format === 'Q8_0' ? (byte << 24) >> 24 : (i < 16 ? byte & 15 : byte >> 4) - 8;
          p += wq * (q[u * 32 + i] as number);
        }
        acc = f32(acc + f32(f32(d * (scale[u] as number)) * p));
      }
      out[t * N + n] = f32(acc + (bias ? (bias[n] as number) : 0));
    }
  }
  return out;
}

describe.each(FORMATS_GROUPED)('%s in row groups', (format) => {
  it('repacking and unpacking any row gives the GGUF bytes back (with and without a tail group)', () => {
    for (const [N, K] of [[1, 32], [7, 96], [8, 64], [9, 288], [17, 32], [24, 1056], [61, 160]] as const) {
      const w = randomRows(format, N, K, N * 31 + K);
      expect(testing.groupedRows(format, w, N, K)).toEqual(w);
    }
  });

  it('the baseline equals the documented order computed here from the GGUF bytes, bit for bit', () => {
    for (const [N, K, T] of [[13, 288, 3], [8, 96, 1], [5, 1056, 2]] as const) {
      const w = randomRows(format, N, K, 3 * N + K);
      const input = randomInput(T, K, K + T);
      const bias = Float32Array.from({ length: N }, (_, i) => (i - 6) * 0.37);
      expect(testing.quantMatmul('baseline', format, w, input, T, N, K, 1)).toEqual(reference(format, w, input, T, N, K));
      expect(testing.quantMatmul('baseline', format, w, input, T, N, K, 2, bias)).toEqual(reference(format, w, input, T, N, K, bias));
    }
  });

  it('every supported kernel set equals the baseline on tail groups, odd K and 1..70 tokens', () => {
    const sets = testing.supportedKernelSets();
    const check = (N: number, K: number, tokens: number[], withBias: boolean) => {
      const w = randomRows(format, N, K, 5 * N + K);
      const bias = withBias ? Float32Array.from({ length: N }, (_, i) => Math.sin(i)) : undefined;
      for (const T of tokens) {
        const input = randomInput(T, K, 7 * T + K);
        const baseline = testing.quantMatmul('baseline', format, w, input, T, N, K, 1, bias);
        for (const set of sets)
          for (const threads of [1, 3]) expect(testing.quantMatmul(set, format, w, input, T, N, K, threads, bias)).toEqual(baseline);
      }
    };
    check(13, 1056, Array.from({ length: 70 }, (_, i) => i + 1), false); // a tail of 5 rows, two passes over K, every T
    check(1, 32, [1, 2, 9], true); // only a tail group
    check(67, 288, [1, 4, 8, 9, 17], true); // K = 9 blocks: not a multiple of 256
    check(64, 2080, [1, 5, 12], false); // whole groups only, three passes
  });
});
