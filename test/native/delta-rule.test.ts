// The gated delta rule's kernels (native/src/cpu/kernels/delta/delta_rule.h):
// each equals the rule computed here in float32 with the same operation order,
// and every kernel set gives the same bits, at head sizes that leave vector
// tails (Dv not a multiple of 16 or 8).
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';

const testing = loadNativeBinding().testing;
const f = Math.fround;

function random(seed: number): () => number {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
}

/** The rule as linear_attention.cc documents it, each operation rounded to float32 in the kernels' order. */
function reference(state: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, decay: number, beta: number) {
  const Dk = q.length, Dv = v.length;
  const S = Float32Array.from(state);
  const kv = new Float32Array(Dv);
  const d = f(decay), b = f(beta);
  for (let i = 0; i < Dk; ++i)
    for (let j = 0; j < Dv; ++j) {
      S[i * Dv + j] = f(S[i * Dv + j]! * d);
      kv[j] = f(kv[j]! + f(S[i * Dv + j]! * k[i]!));
    }
  for (let j = 0; j < Dv; ++j) kv[j] = f(b * f(v[j]! - kv[j]!));
  const out = new Float32Array(Dv);
  for (let i = 0; i < Dk; ++i)
    for (let j = 0; j < Dv; ++j) {
      S[i * Dv + j] = f(S[i * Dv + j]! + f(k[i]! * kv[j]!));
      out[j] = f(out[j]! + f(S[i * Dv + j]! * q[i]!));
    }
  return { state: S, out };
}

const sets = testing.supportedKernelSets();

describe('delta rule kernels', () => {
  it.each([
    [16, 8],
    [128, 128],
    [7, 37],
    [64, 1],
  ])('Dk %i, Dv %i: every kernel set equals the float32 reference bit for bit', (Dk, Dv) => {
    const next = random(Dk * 1000 + Dv);
    const vec = (n: number) => Float32Array.from({ length: n }, next);
    for (let token = 0; token < 3; ++token) {
      const state = vec(Dk * Dv), q = vec(Dk), k = vec(Dk), v = vec(Dv);
      const decay = 0.2 + 0.79 * Math.abs(next()), beta = Math.abs(next());
      const expected = reference(state, q, k, v, decay, beta);
      for (const set of sets) {
        const got = testing.deltaRule(set, state, q, k, v, decay, beta);
        expect(got, set).not.toBeNull();
        expect(Array.from(got!.state), set).toEqual(Array.from(expected.state));
        expect(Array.from(got!.out), set).toEqual(Array.from(expected.out));
      }
    }
  });

  it('refuses mismatched shapes with a RangeError', () => {
    expect(() => testing.deltaRule('baseline', new Float32Array(3), new Float32Array(2), new Float32Array(2), new Float32Array(2), 1, 1)).toThrow(RangeError);
  });
});
