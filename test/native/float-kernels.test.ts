// The float-weight matmul kernels (native/src/cpu/kernels/float/*.cc, entry native/src/cpu/kernels/matmul.cc) on random data
// at odd shapes (K not a multiple of 8 or 16, N not a multiple of any tile,
// 1 to 17 tokens), every kernel set this CPU supports:
//  - the FMA sets (avx2, avxvnni, avx512vnni: AVX2 kernels, resp. AVX-512 ones
//    for avx512vnni) give exactly the same floats as each other;
//  - within a set, a token's outputs do not depend on the other tokens of the
//    call or the thread count, and F16/BF16 weights give exactly the results
//    of their float32 copies;
//  - every set, the baseline (no FMA: it rounds each product) included, is
//    within float32 rounding of float64 products.
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { floatToHalfTruncated, halfToFloat } from '../model-files/safetensors-writer.js';
import { rng } from './quant-blocks.js';

const testing = loadNativeBinding().testing;
const sets = testing.supportedKernelSets();
const fmaSets = sets.filter((s) => s !== 'baseline');
const toBf16 = (f: number) => (new Uint32Array(Float32Array.of(f).buffer)[0] as number) >>> 16;
const fromBf16 = (h: number) => new Float32Array(Uint32Array.of(h << 16).buffer)[0] as number;

function random(n: number, seed: number, scale: number): Float32Array {
  const r = rng(seed);
  return Float32Array.from({ length: n }, () => (r() - 0.5) * scale * (r() < 0.05 ? 10 : 1));
}

type Dtype = 'F32' | 'F16' | 'BF16';
/** The weights as the kernel takes them, and their exact float32 values. */
function weightsOf(dtype: Dtype, values: Float32Array): [Float32Array | Uint16Array, Float32Array] {
  if (dtype === 'F32') return [values, values];
  const bits = Uint16Array.from(values, dtype === 'F16' ? floatToHalfTruncated : toBf16);
  return [bits, Float32Array.from(bits, dtype === 'F16' ? halfToFloat : fromBf16)];
}

const shapes: [number, number][] = [[1, 1], [5, 7], [13, 8], [19, 9], [7, 31], [50, 64], [27, 172], [61, 200]];

describe.each(['F32', 'F16', 'BF16'] as const)('%s weights', (dtype) => {
  it.each(shapes)('N = %i, K = %i: the FMA sets agree exactly; T, threads and the float32 copy change nothing', (N, K) => {
    const [w, wf] = weightsOf(dtype, random(N * K, N * 1000 + K, 0.2));
    const bias = random(N, K, 1);
    for (const T of [1, 2, 3, 4, 5, 9, 17]) {
      const input = random(T * K, T + K, 2);
      const results = sets.map((set) => testing.floatMatmul(set, dtype, w, input, bias, T, N, K, 1));
      const bySet = new Map(sets.map((set, i) => [set, results[i] as Float32Array]));
      for (const set of fmaSets) expect(bySet.get(set)).toEqual(bySet.get(fmaSets[0]!));
      for (const set of sets) {
        const out = bySet.get(set) as Float32Array;
        expect(testing.floatMatmul(set, dtype, w, input, bias, T, N, K, 3)).toEqual(out);
        if (dtype !== 'F32') expect(testing.floatMatmul(set, 'F32', wf, input, bias, T, N, K, 2)).toEqual(out);
        // The last token alone gives its row of the T-token result.
        const last = testing.floatMatmul(set, dtype, w, input.subarray((T - 1) * K), bias, 1, N, K, 1);
        expect(last).toEqual(out.subarray((T - 1) * N));
        // Within float32 rounding of float64 products: |error| <= K * 2^-23 * sum |x w| (loose, but fails on any wrong index).
        for (let t = 0; t < T; t++)
          for (let n = 0; n < N; n++) {
            let exact = bias[n] as number, magnitude = Math.abs(bias[n] as number);
            for (let k = 0; k < K; k++) {
              const p = (input[t * K + k] as number) * (wf[n * K + k] as number);
              exact += p;
              magnitude += Math.abs(p);
            }
            expect(Math.abs((out[t * N + n] as number) - exact)).toBeLessThanOrEqual((K + 2) * 2 ** -23 * magnitude + 1e-30);
          }
      }
    }
  });
});

it('names the CPU flags from CPUID, AMX and AVX512-FP16 among those it looks for', () => {
  const flags = testing.cpuFlags();
  expect(Array.isArray(flags)).toBe(true);
  for (const f of flags) expect(['avx2', 'fma', 'f16c', 'avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16', 'avx_vnni', 'amx_tile', 'amx_int8', 'amx_bf16']).toContain(f);
  // The avx512vnni kernel set runs only where CPUID has what it needs.
  if (sets.includes('avx512vnni')) expect(flags).toEqual(expect.arrayContaining(['avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni']));
});

it('rejects a wrong dtype, array type or size', () => {
  const w = new Float32Array(6), x = new Float32Array(3);
  expect(() => testing.floatMatmul('baseline', 'F32', w, x, null, 1, 2, 3, 1)).not.toThrow();
  expect(() => testing.floatMatmul('baseline', 'F16', w, x, null, 1, 2, 3, 1)).toThrow(/Uint16Array/);
  expect(() => testing.floatMatmul('baseline', 'F32', w, x, null, 1, 3, 3, 1)).toThrow(/wrong size/);
  expect(() => testing.floatMatmul('baseline', 'F32', w, x, new Float32Array(1), 1, 2, 3, 1)).toThrow(/bias/);
  expect(() => testing.floatMatmul('baseline', 'Q8_0' as 'F32', w, x, null, 1, 2, 3, 1)).toThrow(/dtype/);
});
