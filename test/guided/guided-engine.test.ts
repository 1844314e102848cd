/**
 * Guided requests in the engine over the deterministic test backend: masks come before sampling,
 * a grammar with no token left ends only its own request with GrammarDeadEndError, and guided
 * requests leave their neighbours' outputs unchanged.
 */
import { describe, expect, it } from 'vitest';
import { GrammarDeadEndError } from '../../src/index.js';
import { harness, prompts } from '../support/harness.js';

describe('guided requests in the engine', () => {
  it('a grammar that allows no token ends its request with GRAMMAR_DEAD_END; the others are untouched', async () => {
    const h = await harness();
    try {
      const plain = prompts(4);
      const alone = await Promise.all(plain.map((p) => h.pipe.generate(p, { maxTokens: 20, ignoreEos: true })));
      // A top-level integer with EOS ignored: after 15 digits nothing may follow and nothing may end it.
      const dead = h.pipe
        .generate('x', { responseFormat: { type: 'json_schema', schema: { type: 'integer' } }, ignoreEos: true, maxTokens: 50, temperature: 1, seed: 3 })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      const together = await Promise.all(plain.map((p) => h.pipe.generate(p, { maxTokens: 20, ignoreEos: true })));
      const error = await dead;
      expect(error).toBeInstanceOf(GrammarDeadEndError);
      expect((error as GrammarDeadEndError).code).toBe('GRAMMAR_DEAD_END');
      expect(together.map((r) => r.text)).toEqual(alone.map((r) => r.text));
      expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
    } finally {
      await h.pipe.close();
    }
  });

  it('a guided request ends as soon as its grammar is complete, with "stop" and valid JSON', async () => {
    const h = await harness();
    try {
      const schema = { type: 'object', properties: { a: { type: 'boolean' }, b: { enum: ['x', 'yy'] } }, required: ['a', 'b'] };
      for (let seed = 1; seed <= 30; seed++) {
        const r = await h.pipe.generate('q', { responseFormat: { type: 'json_schema', schema }, temperature: 1, seed, maxTokens: 100 });
        expect(r.finishReason).toBe('stop');
        const value = JSON.parse(r.text) as { a: unknown; b: unknown };
        expect(typeof value.a).toBe('boolean');
        expect(['x', 'yy']).toContain(value.b);
      }
    } finally {
      await h.pipe.close();
    }
  });
});
