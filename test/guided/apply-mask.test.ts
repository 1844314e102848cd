import { describe, expect, it } from 'vitest';
import { applyMask } from '../../src/guided/grammar.js';

/** The plain rule: a token the mask does not set becomes -Infinity, every other logit stays. */
function naive(logits: Float32Array, offset: number, vocab: number, mask: Uint32Array): void {
  for (let t = 0; t < vocab; t++) if ((mask[t >>> 5]! & (1 << (t & 31))) === 0) logits[offset + t] = -Infinity;
}

describe('applyMask', () => {
  it('equals the per-token rule on random masks with runs of refused, allowed and mixed words', () => {
    let seed = 7;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let round = 0; round < 300; round++) {
      const vocab = 1 + Math.floor(rand() * 700);
      const words = (vocab + 31) >>> 5;
      const mask = new Uint32Array(words);
      for (let w = 0; w < words; w++) {
        const kind = rand();
        mask[w] = kind < 0.4 ? 0 : kind < 0.7 ? 0xffffffff : (rand() * 2 ** 32) >>> 0;
      }
      const offset = Math.floor(rand() * 3) * vocab;
      const logits = Float32Array.from({ length: 3 * vocab + 5 }, (_, i) => i);
      const expected = logits.slice();
      applyMask(logits, offset, vocab, mask);
      naive(expected, offset, vocab, mask);
      expect(logits).toEqual(expected);
    }
  });
});
