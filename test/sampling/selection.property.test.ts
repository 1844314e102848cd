import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { selectBest, selectMass } from '../../src/sampling/selection.js';

/** The sorted order the sampler's filters are defined on: higher weight first, lower id on ties. */
function sortedIds(weights: number[]): number[] {
  return weights.map((_, i) => i).sort((a, b) => weights[b]! - weights[a]! || a - b);
}

// Few distinct values, so ties are common.
const weightsArb = fc.array(fc.integer({ min: 0, max: 8 }).map((v) => v / 8), { minLength: 1, maxLength: 200 });

describe('partial selection gives the best prefix a full sort would', () => {
  it('selectBest: the same k ids as the first k of the sort', () => {
    fc.assert(
      fc.property(weightsArb, fc.nat(), (w, kSeed) => {
        const k = 1 + (kSeed % w.length);
        const ids = Int32Array.from(w.map((_, i) => i));
        const weights = Float64Array.from(w);
        const n = selectBest(ids, weights, w.length, k);
        expect(n).toBe(k);
        expect([...ids.subarray(0, n)].sort((a, b) => a - b)).toEqual(sortedIds(w).slice(0, k).sort((a, b) => a - b));
        for (let i = 0; i < w.length; i++) expect(weights[i]).toBe(w[ids[i]!]);
      }),
    );
  });

  it('selectMass: the shortest sorted prefix reaching the mass (the crossing token kept)', () => {
    fc.assert(
      fc.property(weightsArb, fc.integer({ min: 1, max: 99 }), (w, percent) => {
        const total = w.reduce((a, b) => a + b, 0);
        const mass = (percent / 100) * total;
        const ids = Int32Array.from(w.map((_, i) => i));
        const n = selectMass(ids, Float64Array.from(w), w.length, mass);
        const order = sortedIds(w);
        let keep = 0;
        let cumulative = 0;
        while (keep < order.length) {
          cumulative += w[order[keep]!]!;
          keep++;
          if (cumulative >= mass) break;
        }
        expect(n).toBe(Math.max(keep, 1));
        expect([...ids.subarray(0, n)].sort((a, b) => a - b)).toEqual(order.slice(0, n).sort((a, b) => a - b));
      }),
    );
  });
});

describe('the arrangement depends on the row alone', () => {
  it('selecting the same row twice, with other selections in between, gives the same order', () => {
    fc.assert(
      fc.property(weightsArb, weightsArb, fc.integer({ min: 1, max: 99 }), (w, other, percent) => {
        const run = (): number[] => {
          const ids = Int32Array.from(w.map((_, i) => i));
          const n = selectMass(ids, Float64Array.from(w), w.length, (percent / 100) * w.reduce((a, b) => a + b, 0));
          return [...ids.subarray(0, n)];
        };
        const first = run();
        selectMass(Int32Array.from(other.map((_, i) => i)), Float64Array.from(other), other.length, 0.5);
        selectBest(Int32Array.from(other.map((_, i) => i)), Float64Array.from(other), other.length, 1);
        expect(run()).toEqual(first);
      }),
    );
  });
});
