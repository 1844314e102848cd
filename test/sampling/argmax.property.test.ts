import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argmax } from '../../src/sampling/sampler.js';

/** The plain scan argmax is defined by: first index of the largest value (NaN never wins). */
function plainArgmax(values: Float32Array, begin: number, end: number): number {
  let best = begin;
  for (let i = begin + 1; i < end; i++) if (values[i]! > values[best]!) best = i;
  return best - begin;
}

describe('argmax', () => {
  it('equals the plain first-maximum scan on any row, offset and length', () => {
    const value = fc.oneof(
      { weight: 8, arbitrary: fc.float({ noNaN: true }) },
      { weight: 1, arbitrary: fc.constantFrom(Number.NaN, -0, 0, Infinity, -Infinity, 1, 1) },
    );
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 70 }), fc.nat(), fc.nat(), (values, a, b) => {
        const row = Float32Array.from(values);
        const begin = a % row.length;
        const end = begin + 1 + (b % (row.length - begin));
        expect(argmax(row, begin, end)).toBe(plainArgmax(row, begin, end));
      }),
      { numRuns: 3000 },
    );
  });
});
