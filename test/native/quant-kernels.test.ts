// The quantized kernels (native/src/cpu/kernels/quant/, k-quants in kquant/, AMX in amx/) on random data:
//  - the GGUF block layouts: the native dequantization equals an independent
//    one written here from the format description, bit for bit;
//  - every kernel set this CPU supports (AVX2, AVX-VNNI, AVX512-VNNI) gives
//    exactly the baseline kernel's floats: the integer dot products are exact
//    and every set keeps the baseline's float order (quant.h);
//  - the baseline is within the bound that quantizing the activations to int8
//    per 32-block (Q8_0, Q4_0) or per 256-block (Q4_K, Q6_K: quant_k.h) allows,
//    against float64 products of the dequantized weights;
//  - quantize -> dequantize round trips stay within half a step (Q8_0) or one
//    step (Q4_0, whose positive end is one level short) of the block's scale.
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { halfToFloat } from '../model-files/safetensors-writer.js';
import { FORMATS, type Format, randomRows, rng } from './quant-blocks.js';

const testing = loadNativeBinding().testing;
const f16 = (b: Uint8Array, at: number) => halfToFloat((b[at] as number) | ((b[at + 1] as number) << 8));
const f32 = Math.fround;

/** Dequantization straight from the GGUF format description (not from the native code). */
function dequantize(format: Format, row: Uint8Array, K: number): Float32Array {
  const out = new Float32Array(K);
  const { weights, bytes } = FORMATS[format];
  for (let blk = 0; blk < K / weights; blk++) {
    const b = row.subarray(blk * bytes, (blk + 1) * bytes);
    const y = out.subarray(blk * weights);
    if (format === 'Q8_0') {
      const d = f16(b, 0);
      for (let i = 0; i < 32; i++) y[i] = f32(d * (((b[2 + i] as number) << 24) >> 24));
    } else if (format === 'Q4_0') {
      const d = f16(b, 0);
      for (let i = 0; i < 16; i++) {
        y[i] = f32(d * (((b[2 + i] as number) & 15) - 8));
        y[i + 16] = f32(d * (((b[2 + i] as number) >> 4) - 8));
      }
    } else if (format === 'Q4_K') {
      const d = f16(b, 0), dmin = f16(b, 2), s = b.subarray(4, 16), qs = b.subarray(16);
      const scaleMin = (j: number): [number, number] =>
        j < 4
          ? [(s[j] as number) & 63, (s[j + 4] as number) & 63]
          : [((s[j + 4] as number) & 15) | (((s[j - 4] as number) >> 6) << 4), ((s[j + 4] as number) >> 4) | (((s[j] as number) >> 6) << 4)];
      for (let c = 0; c < 4; c++) {
        const [sc0, m0] = scaleMin(2 * c), [sc1, m1] = scaleMin(2 * c + 1);
        for (let l = 0; l < 32; l++) {
          const q = qs[32 * c + l] as number;
          y[64 * c + l] = f32(f32(d * sc0) * (q & 15) - f32(dmin * m0));
          y[64 * c + 32 + l] = f32(f32(d * sc1) * (q >> 4) - f32(dmin * m1));
        }
      }
    } else {
      const d = f16(b, 208);
      const sc = (i: number) => ((b[192 + i] as number) << 24) >> 24;
      for (let n = 0; n < 2; n++) {
        const ql = b.subarray(64 * n), qh = b.subarray(128 + 32 * n);
        for (let l = 0; l < 32; l++) {
          const is = 8 * n + (l >> 4);
          const h = qh[l] as number;
          const q = [((ql[l] as number) & 15) | ((h & 3) << 4), ((ql[l + 32] as number) & 15) | (((h >> 2) & 3) << 4), ((ql[l] as number) >> 4) | (((h >> 4) & 3) << 4), ((ql[l + 32] as number) >> 4) | (((h >> 6) & 3) << 4)];
          for (let k = 0; k < 4; k++) y[128 * n + 32 * k + l] = f32(f32(d * sc(is + 2 * k)) * ((q[k] as number) - 32));
        }
      }
    }
  }
  return out;
}

function randomInput(T: number, K: number, seed: number): Float32Array {
  const r = rng(seed);
  // Mostly small values with a few large ones, as activations have.
  return Float32Array.from({ length: T * K }, () => (r() - 0.5) * (r() < 0.05 ? 20 : 2));
}

// K = 1280 (40 blocks): Q8_0 / Q4_0 row groups go in passes of 32 blocks once a step has more than
// one token tile (T > 4 or 8), in one pass below that (quant_group_kernels.h); both orders must agree.
const cases: [Format, number][] = [['Q8_0', 96], ['Q8_0', 512], ['Q8_0', 1280], ['Q4_0', 96], ['Q4_0', 512], ['Q4_0', 1280], ['Q4_K', 512], ['Q6_K', 512]];

describe.each(cases)('%s, K = %i', (format, K) => {
  const N = 19;
  const weights = randomRows(format, N, K, 7 + K);
  const rowBytes = (K / FORMATS[format].weights) * FORMATS[format].bytes;

  it('the native dequantization equals the format description exactly', () => {
    for (let n = 0; n < N; n++) {
      const row = weights.subarray(n * rowBytes, (n + 1) * rowBytes);
      expect(testing.dequantizeRow(format, row, K)).toEqual(dequantize(format, row, K));
    }
  });

  it('every supported kernel set gives exactly the baseline results, for any T and thread count', () => {
    const sets = testing.supportedKernelSets();
    expect(sets[0]).toBe('baseline');
    for (const T of [1, 2, 3, 4, 5, 9]) {
      const input = randomInput(T, K, T);
      const baseline = testing.quantMatmul('baseline', format, weights, input, T, N, K, 1);
      for (const set of sets)
        for (const threads of [1, 3]) expect(testing.quantMatmul(set, format, weights, input, T, N, K, threads)).toEqual(baseline);
    }
  });

  it('the baseline is within the int8-activation bound of float64 products', () => {
    const T = 5;
    const input = randomInput(T, K, 99);
    const out = testing.quantMatmul('baseline', format, weights, input, T, N, K, 2);
    for (let n = 0; n < N; n++) {
      const w = dequantize(format, weights.subarray(n * rowBytes, (n + 1) * rowBytes), K);
      for (let t = 0; t < T; t++) {
        let exact = 0, bound = 0, magnitude = 0;
        const block = format === 'Q4_K' || format === 'Q6_K' ? 256 : 32; // the activations' quantization block
        for (let u = 0; u < K / block; u++) {
          let amax = 0, wsum = 0;
          for (let i = u * block; i < u * block + block; i++) {
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

describe.each(['Q8_0', 'Q4_0'] as const)('quantizing rows to %s', (format) => {
  it('round trips within the format step, per block', () => {
    const K = 1024;
    const values = randomInput(1, K, 5);
    values[3] = 0; // and an all-zero block
    values.fill(0, 64, 96);
    const back = testing.dequantizeRow(format, testing.quantizeRow(format, values), K);
    for (let b = 0; b < K / 32; b++) {
      const block = values.subarray(b * 32, b * 32 + 32);
      const amax = Math.max(...block.map(Math.abs));
      // Q8_0: step amax / 127, error half a step (+ the f16 rounding of the scale, 2^-11 relative, over 127 steps).
      // Q4_0: step amax / 8; the extreme maps to -8 and the other end reaches only +7: up to one step.
      const allowed = format === 'Q8_0' ? (amax / 127) * (0.5 + 127 * 2 ** -11) : (amax / 8) * (1 + 8 * 2 ** -11);
      for (let i = 0; i < 32; i++) expect(Math.abs((back[b * 32 + i] as number) - (block[i] as number))).toBeLessThanOrEqual(allowed * 1.0001 + 1e-12);
    }
    expect(back.subarray(64, 96).every((v) => v === 0)).toBe(true); // (Q4_0's scale of a zero block is -0)
  });
});

it('rejects wrong sizes and unknown formats with errors', () => {
  expect(() => testing.quantMatmul('baseline', 'Q8_0', new Uint8Array(33), new Float32Array(32), 1, 1, 32, 1)).toThrow(/wrong size/);
  expect(() => testing.quantMatmul('baseline', 'Q4_K', new Uint8Array(144), new Float32Array(32), 1, 1, 32, 1)).toThrow(/whole blocks/);
  expect(() => testing.dequantizeRow('Q5_K', new Uint8Array(176), 256)).toThrow(/dtype/);
});
