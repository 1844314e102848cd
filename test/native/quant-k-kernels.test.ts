// The Q4_K / Q6_K k-group kernels (native/src/cpu/kernels/quant/kquant/quant_k*.cc; weights repacked into groups of 16
// interleaved rows, native/src/cpu/kernels/quant/quant_repack.h) on random blocks:
//  - packing GGUF rows into k-groups and unpacking any row gives the GGUF bytes back (padded last
//    group or not);
//  - the baseline equals, bit for bit, the reference order that quant_k.h states, computed here
//    independently from the GGUF bytes in float32 steps (activations quantized per 256-block,
//    exact integer sums per super-block and row, one float step per super-block), with and without
//    a bias: a packing bug that every kernel set shares cannot hide behind their agreement;
//  - every kernel set this CPU supports gives exactly the baseline's floats, for row counts that
//    fill no group (or half-group) evenly, several super-blocks per row (and rows long enough to go
//    in passes), 1..70 tokens (the 4- and 8-token tiles and their remainders), with and without a
//    bias, and 1 or 3 threads;
//  - the baseline is within the bound that int8 activations per 256-block allow, against
//    float64 products of the dequantized weights.
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { halfToFloat } from '../model-files/safetensors-writer.js';
import { FORMATS, randomRows, rng } from './quant-blocks.js';

const testing = loadNativeBinding().testing;
const f32 = Math.fround;
const f16 = (b: Uint8Array, at: number) => halfToFloat((b[at] as number) | ((b[at + 1] as number) << 8));
const int8 = (v: number) => (v << 24) >> 24;

/** Round half to even, as std::nearbyint does in the default rounding mode. */
function nearbyint(v: number): number {
  const r = Math.round(v);
  return Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** One token's activations per 256-block: int8 q, scale d, sums of each 16. */
function quantizeActivations(x: Float32Array) {
  const q = new Int8Array(x.length), d: number[] = [], sum16: number[] = [];
  for (let b = 0; b < x.length / 256; b++) {
    let amax = 0;
    for (let i = 0; i < 256; i++) amax = Math.max(amax, Math.abs(x[256 * b + i] as number));
    const s = f32(amax / 127), inv = s > 0 ? f32(1 / s) : 0;
    for (let g = 0; g < 16; g++) {
      let total = 0;
      for (let i = 16 * g; i < 16 * g + 16; i++) {
        const v = Math.max(-127, Math.min(127, nearbyint(f32((x[256 * b + i] as number) * inv))));
        q[256 * b + i] = v;
        total += v;
      }
      sum16.push(total);
    }
    d.push(s);
  }
  return { q, d, sum16 };
}

function q4kScaleMin(s: Uint8Array, j: number): [number, number] {
  return j < 4
    ? [(s[j] as number) & 63, (s[j + 4] as number) & 63]
    : [((s[j + 4] as number) & 15) | (((s[j - 4] as number) >> 6) << 4), ((s[j + 4] as number) >> 4) | (((s[j] as number) >> 6) << 4)];
}

/** The reference order of quant_k.h for one row and one token (+ bias). */
function referenceDot(format: 'Q4_K' | 'Q6_K', row: Uint8Array, x: ReturnType<typeof quantizeActivations>, bias = 0): number {
  const { bytes } = FORMATS[format];
  let acc = 0;
  for (let blk = 0; blk < row.length / bytes; blk++) {
    const b = row.subarray(blk * bytes, (blk + 1) * bytes);
    const xq = x.q.subarray(256 * blk), xs = x.sum16.slice(16 * blk, 16 * blk + 16) as number[];
    const xd = x.d[blk] as number;
    let isum = 0;
    if (format === 'Q4_K') {
      let msum = 0;
      for (let j = 0; j < 8; j++) {
        const [sc, m] = q4kScaleMin(b.subarray(4, 16), j);
        let p = 0;
        for (let i = 0; i < 32; i++) {
          const byte = b[16 + 32 * (j >> 1) + i] as number;
          p += (j % 2 ? byte >> 4 : byte & 15) * (xq[32 * j + i] as number);
        }
        isum += sc * p;
        msum += m * (xs[2 * j]! + xs[2 * j + 1]!);
      }
      const fd = f32(f16(b, 0) * xd), fm = f32(f16(b, 2) * xd);
      acc = f32(acc + f32(f32(fd * f32(isum)) - f32(fm * f32(msum))));
    } else {
      for (let j = 0; j < 16; j++) {
        let p = 0;
        for (let i = 16 * j; i < 16 * j + 16; i++) {
          const half = i >> 7, quarter = (i >> 5) % 4, at = i % 32;
          const ql = b[64 * half + 32 * (quarter % 2) + at] as number, qh = b[128 + 32 * half + at] as number;
          const u = (quarter >= 2 ? ql >> 4 : ql & 15) | (((qh >> (2 * quarter)) & 3) << 4);
          p += (u - 32) * (xq[i] as number);
        }
        isum += int8(b[192 + j] as number) * p;
      }
      acc = f32(acc + f32(f32(f16(b, 208) * xd) * f32(isum)));
    }
  }
  return f32(acc + bias);
}

function randomInput(T: number, K: number, seed: number): Float32Array {
  const r = rng(seed);
  // Mostly small values with a few large ones, as activations have.
  return Float32Array.from({ length: T * K }, () => (r() - 0.5) * (r() < 0.05 ? 20 : 2));
}

describe.each(['Q4_K', 'Q6_K'] as const)('%s super-block kernels', (format) => {
  const { bytes } = FORMATS[format];

  it('packing into k-groups and unpacking any row gives the GGUF bytes back (padded last group or not)', () => {
    for (const [N, K] of [[1, 256], [7, 512], [16, 256], [17, 768], [40, 256], [64, 512]] as const) {
      const w = randomRows(format, N, K, N * 31 + K);
      expect(testing.groupedRows(format, w, N, K)).toEqual(w);
    }
  });

  it('the baseline equals the reference order of quant_k.h bit for bit, with and without a bias', () => {
    for (const [N, K, T] of [[5, 768, 3], [19, 512, 2], [32, 256, 1]] as const) {
      const weights = randomRows(format, N, K, 3 + N);
      const input = randomInput(T, K, 4 + K);
      const bias = Float32Array.from({ length: N }, (_, i) => (i - 6) * 0.37);
      const out = testing.quantMatmul('baseline', format, weights, input, T, N, K, 1);
      const withBias = testing.quantMatmul('baseline', format, weights, input, T, N, K, 2, bias);
      const rowBytes = (K / 256) * bytes;
      for (let t = 0; t < T; t++) {
        const x = quantizeActivations(input.subarray(t * K, (t + 1) * K));
        for (let n = 0; n < N; n++) {
          const row = weights.subarray(n * rowBytes, (n + 1) * rowBytes);
          expect(out[t * N + n]).toBe(referenceDot(format, row, x));
          expect(withBias[t * N + n]).toBe(referenceDot(format, row, x, bias[n]));
        }
      }
    }
  });

  it('every supported set equals the baseline for odd row counts, 1..70 tokens and any thread count', () => {
    const sets = testing.supportedKernelSets();
    // 1, 7: one padded group; 24: a half-group left (AVX2's 8-row halves, AVX-512's masked store); 33: two whole groups + 1 row;
    // K = 1280 and 2304: passes of 4 super-blocks over the groups once there is more than one token tile (a pass of 1 and of 1).
    for (const [N, K, withBias] of [[1, 256, false], [7, 512, true], [24, 512, false], [33, 768, true], [40, 1280, true], [17, 2304, false]] as const) {
      const weights = randomRows(format, N, K, N + K);
      const bias = withBias ? Float32Array.from({ length: N }, (_, i) => Math.sin(i)) : undefined;
      for (const T of [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 64, 70]) {
        const input = randomInput(T, K, T * 31 + N);
        const baseline = testing.quantMatmul('baseline', format, weights, input, T, N, K, 1, bias);
        for (const set of sets)
          for (const threads of [1, 3]) expect(testing.quantMatmul(set, format, weights, input, T, N, K, threads, bias)).toEqual(baseline);
      }
    }
  });

  it('scales at their extremes (int8 -128 for Q6_K, 63 for Q4_K) and all-zero or one-hot activations stay exact', () => {
    const N = 3, K = 512;
    const weights = randomRows(format, N, K, 11);
    for (let b = 0; b < weights.length; b += bytes) {
      if (format === 'Q6_K') weights.fill(0x80, b + 192, b + 208); // every scale -128
      else weights.fill(0xff, b + 4, b + 16); // every 6-bit scale and min 63
      weights.fill(0xff, b + (format === 'Q6_K' ? 0 : 16), b + (format === 'Q6_K' ? 192 : 144)); // largest quants
    }
    const saturated = new Float32Array(2 * K).fill(-3); // every activation -127 after quantization
    const oneHot = new Float32Array(2 * K);
    oneHot[5] = 1;
    const zero = new Float32Array(2 * K);
    for (const input of [saturated, oneHot, zero]) {
      const baseline = testing.quantMatmul('baseline', format, weights, input, 2, N, K, 1);
      const rowBytes = (K / 256) * bytes;
      const x = quantizeActivations(input.subarray(0, K));
      for (let n = 0; n < N; n++) expect(baseline[n]).toBe(referenceDot(format, weights.subarray(n * rowBytes, (n + 1) * rowBytes), x));
      for (const set of testing.supportedKernelSets()) expect(testing.quantMatmul(set, format, weights, input, 2, N, K, 2)).toEqual(baseline);
    }
  });

  it('the baseline is within the int8-activation (per 256-block) bound of float64 products', () => {
    const N = 9, K = 512, T = 4;
    const weights = randomRows(format, N, K, 5);
    const input = randomInput(T, K, 6);
    const out = testing.quantMatmul('baseline', format, weights, input, T, N, K, 2);
    const rowBytes = (K / 256) * bytes;
    for (let n = 0; n < N; n++) {
      const w = testing.dequantizeRow(format, weights.subarray(n * rowBytes, (n + 1) * rowBytes), K);
      for (let t = 0; t < T; t++) {
        let exact = 0, bound = 0, magnitude = 0;
        for (let blk = 0; blk < K / 256; blk++) {
          let amax = 0, wsum = 0;
          for (let i = 256 * blk; i < 256 * blk + 256; i++) {
            const x = input[t * K + i] as number, wi = w[i] as number;
            exact += x * wi;
            magnitude += Math.abs(x * wi);
            amax = Math.max(amax, Math.abs(x));
            wsum += Math.abs(wi);
          }
          bound += (amax / 127 / 2) * wsum; // each activation moves at most half a step
        }
        expect(Math.abs((out[t * N + n] as number) - exact)).toBeLessThanOrEqual(bound * 1.001 + magnitude * 1e-5 + 1e-7);
      }
    }
  });
});
