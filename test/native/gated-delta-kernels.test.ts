// The Gated DeltaNet kernels (native/src/cpu/kernels/linear/gated_delta.h) of
// every kernel set this CPU supports, through the test hooks: against a float64
// reference of the math, and bit for bit against themselves whatever the calls
// (tokens given in calls of 1, 7 or 64, columns or channels in ranges that cut
// vector groups), as the engine's step splits need.
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';

const testing = loadNativeBinding().testing;
const sets = testing.supportedKernelSets();

/** Deterministic uniform floats in [lo, hi) (a 32-bit LCG). */
function uniform(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + ((hi - lo) * s) / 2 ** 32;
  });
}

const bitsEqual = (a: Float32Array, b: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const maxAbs = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((m, x, i) => Math.max(m, Math.abs(x - (b[i] as number))), 0);

/** One head's inputs as the layer makes them: q and k L2-normalised (q / sqrt(dk)), g <= 0, beta in (0, 1). */
function deltaInputs(dk: number, dv: number, tokens: number, seed: number) {
  const row = 2 * dk + dv;
  const qkv = uniform(tokens * row, seed);
  for (let t = 0; t < tokens; t++)
    for (const [at, scale] of [[0, 1 / Math.sqrt(dk)], [dk, 1]] as const) {
      const x = qkv.subarray(t * row + at, t * row + at + dk);
      const norm = Math.sqrt(x.reduce((s, v) => s + v * v, 0));
      x.forEach((v, i) => (x[i] = (v / norm) * scale));
    }
  return {
    dk, dv, tokens, qkv, state: uniform(dk * dv, seed + 1, -0.5, 0.5),
    logDecay: uniform(tokens, seed + 2, -2, 0), beta: uniform(tokens, seed + 3, 0, 1),
  };
}

/** The delta rule in float64, token by token. */
function deltaReference(a: ReturnType<typeof deltaInputs>): { state: Float64Array; out: Float64Array } {
  const { dk, dv, tokens, qkv } = a;
  const S = Float64Array.from(a.state), out = new Float64Array(tokens * dv), row = 2 * dk + dv;
  for (let t = 0; t < tokens; t++) {
    const q = qkv.subarray(t * row, t * row + dk), k = qkv.subarray(t * row + dk, t * row + 2 * dk), v = qkv.subarray(t * row + 2 * dk, (t + 1) * row);
    const decay = Math.exp(a.logDecay[t]!);
    for (let i = 0; i < dk * dv; i++) S[i]! *= decay;
    for (let j = 0; j < dv; j++) {
      let kv = 0;
      for (let i = 0; i < dk; i++) kv += S[i * dv + j]! * k[i]!;
      const delta = a.beta[t]! * (v[j]! - kv);
      let o = 0;
      for (let i = 0; i < dk; i++) {
        S[i * dv + j]! += k[i]! * delta;
        o += S[i * dv + j]! * q[i]!;
      }
      out[t * dv + j] = o;
    }
  }
  return { state: S, out };
}

describe.each(sets)('%s', (set) => {
  // 128 x 128: Qwen3.5's heads (whole vector groups); 16 x 40: groups, single vectors and a scalar tail.
  describe.each([[128, 128], [16, 40]])('deltaRule, d_k %i x d_v %i', (dk, dv) => {
    const input = deltaInputs(dk, dv, 70, dk + dv);
    const whole = testing.deltaRule(set, { ...input, split: 70, columns: dv })!;

    it('equals the float64 recurrence', () => {
      const ref = deltaReference(input);
      expect(maxAbs(whole.state, ref.state)).toBeLessThan(2e-5);
      expect(maxAbs(whole.out, ref.out)).toBeLessThan(2e-5);
    });

    it.each([[1, dv], [7, dv], [64, dv], [70, 16], [7, 24], [70, 5]])('in calls of %i tokens over %i columns: the same state and outputs, bit for bit', (split, columns) => {
      const part = testing.deltaRule(set, { ...input, split, columns })!;
      expect(bitsEqual(part.state, whole.state)).toBe(true);
      expect(bitsEqual(part.out, whole.out)).toBe(true);
    });
  });

  describe('convSilu, 100 channels, 4 taps', () => {
    const C = 100, K = 4, tokens = 70;
    const input = { channels: C, K, tokens, rows: uniform(tokens * C, 7, -3, 3), taps: uniform(C * K, 8), window: uniform((K - 1) * C, 9, -3, 3) };
    const whole = testing.convSilu(set, { ...input, split: tokens, columns: C })!;

    it('equals the float64 causal conv with SiLU, and leaves the last K - 1 inputs as the window', () => {
      const out = new Float64Array(tokens * C);
      for (let c = 0; c < C; c++) {
        const seen = [...Array.from({ length: K - 1 }, (_, j) => input.window[j * C + c]!)];
        for (let t = 0; t < tokens; t++) {
          seen.push(input.rows[t * C + c]!);
          const y = seen.slice(-K).reduce((s, x, j) => s + x * input.taps[c * K + j]!, 0);
          out[t * C + c] = y / (1 + Math.exp(-y));
        }
      }
      expect(maxAbs(whole.rows, out)).toBeLessThan(1e-5);
      const lastInputs = Array.from({ length: (K - 1) * C }, (_, i) => input.rows[(tokens - (K - 1) + Math.floor(i / C)) * C + (i % C)]!);
      expect(bitsEqual(whole.window, Float32Array.from(lastInputs))).toBe(true);
    });

    it.each([[1, C], [7, C], [64, 16], [70, 7]])('in calls of %i tokens over %i channels: the same outputs and window, bit for bit', (split, columns) => {
      const part = testing.convSilu(set, { ...input, split, columns })!;
      expect(bitsEqual(part.rows, whole.rows)).toBe(true);
      expect(bitsEqual(part.window, whole.window)).toBe(true);
    });
  });
});

describe('the hooks refuse bad input', () => {
  it('a wrong-sized array or an unknown set is a typed error', () => {
    const input = deltaInputs(16, 16, 4, 1);
    expect(() => testing.deltaRule('baseline', { ...input, state: new Float32Array(3), split: 1, columns: 16 })).toThrow(RangeError);
    expect(() => testing.deltaRule('sse9' as 'baseline', { ...input, split: 1, columns: 16 })).toThrow(TypeError);
    expect(() => testing.convSilu('baseline', { channels: 4, K: 17, tokens: 1, rows: new Float32Array(4), taps: new Float32Array(68), window: new Float32Array(64), split: 1, columns: 4 })).toThrow(RangeError);
  });
});

// The AVX2 and AVX-512 builds are one source on Vec16, whose two headers match lane for lane (vec16_avx2.h).
describe.skipIf(!sets.includes('avx2') || !sets.includes('avx512vnni'))('the AVX2 and AVX-512 builds', () => {
  it('give the same bits', () => {
    const delta = deltaInputs(128, 40, 20, 5);
    const [a, b] = (['avx2', 'avx512vnni'] as const).map((set) => testing.deltaRule(set, { ...delta, split: 20, columns: 40 })!);
    expect(bitsEqual(a!.state, b!.state) && bitsEqual(a!.out, b!.out)).toBe(true);
    const conv = { channels: 40, K: 4, tokens: 20, rows: uniform(800, 11, -3, 3), taps: uniform(160, 12), window: uniform(120, 13), split: 20, columns: 40 };
    const [c, d] = (['avx2', 'avx512vnni'] as const).map((set) => testing.convSilu(set, conv)!);
    expect(bitsEqual(c!.rows, d!.rows) && bitsEqual(c!.window, d!.window)).toBe(true);
  });
});
