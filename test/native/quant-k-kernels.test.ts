// The Q4_K / Q6_K super-block kernels (native/src/cpu/quant_k*.cc) on random blocks:
//  - the baseline equals, bit for bit, the reference order that quant_k.h states, computed
//    here independently in float32 steps (activations quantized per 256-block, exact integer
//    lane sums per super-block, one float step per super-block);
//  - every kernel set this CPU supports gives exactly the baseline's floats, for row counts
//    that fill no SIMD width evenly, several super-blocks per row, 1..70 tokens (the 4-token
//    tiles and their remainders) and 1 or 3 threads;
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

/** The reference order of quant_k.h for one row and one token. */
function referenceDot(format: 'Q4_K' | 'Q6_K', row: Uint8Array, x: ReturnType<typeof quantizeActivations>): number {
  const { bytes } = FORMATS[format];
  const acc = new Array<number>(8).fill(0);
  for (let blk = 0; blk < row.length / bytes; blk++) {
    const b = row.subarray(blk * bytes, (blk + 1) * bytes);
    const xq = x.q.subarray(256 * blk), xs = x.sum16.slice(16 * blk, 16 * blk + 16) as number[];
    const isum = new Array<number>(8).fill(0), msum = new Array<number>(8).fill(0);
    for (let j = 0; j < 8; j++) {
      for (let l = 0; l < 8; l++) {
        let p = 0;
        for (let i = 4 * l; i < 4 * l + 4; i++) {
          let u: number;
          if (format === 'Q4_K') u = j % 2 ? (b[16 + 32 * (j >> 1) + i] as number) >> 4 : (b[16 + 32 * (j >> 1) + i] as number) & 15;
          else {
            const half = j >> 2, quarter = j % 4;
            const ql = b[64 * half + 32 * (quarter % 2) + i] as number, qh = b[128 + 32 * half + i] as number;
            u = ((quarter >= 2 ? ql >> 4 : ql & 15) | (((qh >> (2 * quarter)) & 3) << 4));
          }
          p += u * (xq[32 * j + i] as number);
        }
        isum[l]! += (format === 'Q4_K' ? q4kScaleMin(b.subarray(4, 16), j)[0] : int8(b[192 + 2 * j + (l >> 2)] as number)) * p;
      }
    }
    for (let l = 0; l < 8; l++) {
      if (format === 'Q4_K') msum[l] = q4kScaleMin(b.subarray(4, 16), l)[1] * (xs[2 * l]! + xs[2 * l + 1]!);
      else isum[l]! -= 32 * (int8(b[192 + 2 * l] as number) * xs[2 * l]! + int8(b[193 + 2 * l] as number) * xs[2 * l + 1]!);
    }
    const xd = x.d[blk] as number;
    if (format === 'Q4_K') {
      const fd = f32(f16(b, 0) * xd), fm = f32(f16(b, 2) * xd);
      for (let l = 0; l < 8; l++) acc[l] = f32(acc[l]! + f32(f32(fd * f32(isum[l]!)) - f32(fm * f32(msum[l]!))));
    } else {
      const fd = f32(f16(b, 208) * xd);
      for (let l = 0; l < 8; l++) acc[l] = f32(acc[l]! + f32(fd * f32(isum[l]!)));
    }
  }
  const [a0, a1, a2, a3, a4, a5, a6, a7] = acc as [number, number, number, number, number, number, number, number];
  return f32(f32(f32(a0 + a1) + f32(a2 + a3)) + f32(f32(a4 + a5) + f32(a6 + a7)));
}

function randomInput(T: number, K: number, seed: number): Float32Array {
  const r = rng(seed);
  // Mostly small values with a few large ones, as activations have.
  return Float32Array.from({ length: T * K }, () => (r() - 0.5) * (r() < 0.05 ? 20 : 2));
}

describe.each(['Q4_K', 'Q6_K'] as const)('%s super-block kernels', (format) => {
  const { bytes } = FORMATS[format];

  it('the baseline equals the reference order of quant_k.h bit for bit', () => {
    const N = 5, K = 768, T = 3;
    const weights = randomRows(format, N, K, 3);
    const input = randomInput(T, K, 4);
    const out = testing.quantMatmul('baseline', format, weights, input, T, N, K, 1);
    const rowBytes = (K / 256) * bytes;
    for (let t = 0; t < T; t++) {
      const x = quantizeActivations(input.subarray(t * K, (t + 1) * K));
      for (let n = 0; n < N; n++) expect(out[t * N + n]).toBe(referenceDot(format, weights.subarray(n * rowBytes, (n + 1) * rowBytes), x));
    }
  });

  it('every supported set equals the baseline for odd row counts, 1..70 tokens and any thread count', () => {
    const sets = testing.supportedKernelSets();
    for (const [N, K] of [[1, 256], [7, 512], [33, 768]] as const) {
      const weights = randomRows(format, N, K, N + K);
      for (const T of [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 33, 64, 70]) {
        const input = randomInput(T, K, T * 31 + N);
        const baseline = testing.quantMatmul('baseline', format, weights, input, T, N, K, 1);
        for (const set of sets)
          for (const threads of [1, 3]) expect(testing.quantMatmul(set, format, weights, input, T, N, K, threads)).toEqual(baseline);
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
