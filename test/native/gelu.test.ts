/**
 * The exact GELU of BERT-family MLPs, 0.5 x (1 + erf(x / sqrt 2)), in every kernel set
 * (native/src/cpu/kernels/activation/activation.h): the vector kernels against a
 * double-precision reference within their stated bound, bit-identical to each other, and
 * the baseline (the C library's erf) as it was.
 */
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';

const testing = loadNativeBinding().testing;

/** erf in double precision (Abramowitz and Stegun 7.1.28's series would do; this is the Taylor/continued-fraction pair). */
function erf(x: number): number {
  const a = Math.abs(x);
  let value: number;
  if (a < 3) {
    // Maclaurin series: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
    let term = a, sum = a;
    for (let n = 1; n < 200 && Math.abs(term) > 1e-18 * Math.abs(sum); n++) {
      term *= (-a * a) / n;
      sum += term / (2 * n + 1);
    }
    value = (2 / Math.sqrt(Math.PI)) * sum;
  } else {
    // erfc by its continued fraction (Lentz), accurate past 3
    let f = a, c = a, d = 0;
    for (let n = 1; n < 300; n++) {
      const an = n / 2;
      d = a + an * d;
      d = 1 / d;
      c = a + an / c;
      const delta = c * d;
      f *= delta;
      if (Math.abs(delta - 1) < 1e-16) break;
    }
    value = 1 - Math.exp(-a * a) / (Math.sqrt(Math.PI) * f);
  }
  return x < 0 ? -value : value;
}
const gelu = (x: number) => 0.5 * x * (1 + erf(x / Math.SQRT2));

const grid = (): Float32Array => {
  const xs: number[] = [0, -0, 1e-30, -1e-30, 1e-8, -1e-8, 88, -88, 1000, -1000];
  for (let x = -12; x <= 12; x += 1 / 256) xs.push(x);
  return Float32Array.from(xs);
};

describe('GELU (erf) kernels', () => {
  const sets = testing.supportedKernelSets().filter((set) => set !== 'baseline');
  const xs = grid();

  it('the baseline (C library erf) is within 1e-6 of the double-precision GELU', () => {
    const out = testing.geluErf('baseline', xs)!;
    xs.forEach((x, i) => expect(Math.abs(out[i]! - gelu(x))).toBeLessThan(1e-6 * (1 + Math.abs(x))));
  });

  it.each(sets)('%s: within 2e-7 (1 + |x|) of the double-precision GELU, on a 1/256 grid of [-12, 12] and edges', (set) => {
    const out = testing.geluErf(set, xs)!;
    let worst = 0;
    xs.forEach((x, i) => {
      const error = Math.abs(out[i]! - gelu(x)) / (1 + Math.abs(x));
      worst = Math.max(worst, error);
    });
    expect(worst).toBeLessThan(2e-7);
    // The far tails exactly: 0 below, x above; infinities and NaN as the scalar form gives them.
    const edges = testing.geluErf(set, Float32Array.from([-30, 30, Infinity, Number.NaN]))!;
    expect([...edges.slice(0, 3)]).toEqual([-0, 30, Infinity]);
    expect(Number.isNaN(edges[3]!)).toBe(true);
  });

  it('every vector set gives the same bits, whatever the length (tails through the same code)', () => {
    if (sets.length < 2) return;
    for (const n of [1, 15, 16, 17, 1000]) {
      const part = xs.slice(100, 100 + n);
      const first = testing.geluErf(sets[0]!, part)!;
      for (const set of sets.slice(1)) expect(testing.geluErf(set, part)).toEqual(first);
      // An element's result does not depend on where the range starts.
      expect(first[0]).toBe(testing.geluErf(sets[0]!, part.slice(0, 1))![0]);
    }
  });

  it('refuses what it cannot take', () => {
    expect(() => testing.geluErf('avx9', new Float32Array(4))).toThrow(/unknown kernel set/);
    expect(() => testing.geluErf('baseline', new Float64Array(4) as unknown as Float32Array)).toThrow(/Float32Array/);
  });
});
