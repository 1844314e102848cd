/**
 * Guided requests in the engine over the deterministic test backend: masks come before sampling,
 * a grammar with no token left ends only its own request with GrammarDeadEndError, and guided
 * requests leave their neighbours' outputs unchanged.
 */
import { describe, expect, it } from 'vitest';
import { GrammarMatcher } from '../../src/guided/grammar.js';
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

describe('masks and the backend', () => {
  it('fills masks while the backend computes the step, not after it', async () => {
    const h = await harness({ backend: { delayMs: 5 } });
    try {
      let inFlight = false;
      const execute = h.backend.execute.bind(h.backend);
      h.backend.execute = async (batch) => {
        inFlight = true;
        try {
          return await execute(batch);
        } finally {
          inFlight = false;
        }
      };
      const during: boolean[] = [];
      const original = GrammarMatcher.prototype.fillMask;
      GrammarMatcher.prototype.fillMask = function (mask: Uint32Array): boolean {
        during.push(inFlight);
        return original.call(this, mask);
      };
      try {
        const r = await h.pipe.generate('q', { responseFormat: { type: 'json_schema', schema: { enum: ['alpha', 'beta'] } }, temperature: 1, seed: 2 });
        expect(['"alpha"', '"beta"']).toContain(r.text);
      } finally {
        GrammarMatcher.prototype.fillMask = original;
      }
      expect(during.length).toBeGreaterThan(0);
      expect(during.every((x) => x)).toBe(true);
    } finally {
      await h.pipe.close();
    }
  });
});
