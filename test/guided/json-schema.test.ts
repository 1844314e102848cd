import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { END_STACK, Stack } from '../../src/guided/automaton.js';
import { CompiledGrammar } from '../../src/guided/grammar.js';
import { valueStart } from '../../src/guided/json-frames.js';
import { compileSchema } from '../../src/guided/json-schema.js';
import { InvalidOptionError } from '../../src/errors.js';
import { SUITE } from './schema-suite.js';
import { sampleText, syntheticVocabulary } from './synthetic-vocabulary.js';

const { vocabulary, endToken } = syntheticVocabulary(4000);

function grammarOf(schema: unknown): CompiledGrammar {
  return new CompiledGrammar(vocabulary, new Stack(valueStart(compileSchema(schema, 'schema')), END_STACK));
}

describe('JSON schema grammars', () => {
  const ajv = new Ajv({ strict: false });
  for (const [name, schema] of Object.entries(SUITE)) {
    it(`${name}: 200 random walks over a 4000-token vocabulary all parse and validate`, () => {
      const validate = ajv.compile(schema as object);
      const grammar = grammarOf(schema);
      let ended = 0;
      for (let seed = 1; seed <= 200; seed++) {
        const { text, ended: done } = sampleText(grammar.matcher([endToken]), vocabulary, endToken, seed, 400);
        if (!done) continue;
        ended++;
        const value: unknown = JSON.parse(text);
        if (!validate(value)) throw new Error(`${text}: ${ajv.errorsText(validate.errors)}`);
      }
      expect(ended).toBeGreaterThan(190);
    });
  }

  it('refuses keywords it cannot guarantee, naming them', () => {
    // (pattern, minimum, format, ... are supported now: json-schema-keywords.test.ts.)
    expect(() => compileSchema({ type: 'string', pattern: '(?=a)' }, 'responseFormat.schema')).toThrow(InvalidOptionError);
    expect(() => compileSchema({ type: 'string', pattern: '(?=a)' }, 'responseFormat.schema')).toThrow(/responseFormat\.schema\.pattern/);
    expect(() => compileSchema({ type: 'integer', not: { const: 0 } }, 's')).toThrow(/"not"/);
    expect(() => compileSchema({ type: 'object', required: ['a'], additionalProperties: false }, 's')).toThrow(/"a" is required/);
    expect(() => compileSchema({ $ref: '#/$defs/missing' }, 's')).toThrow(/not defined/);
  });

  it('masks only tokens the grammar accepts, and accepts every token of the mask', () => {
    const grammar = grammarOf(SUITE.calculator);
    const matcher = grammar.matcher([endToken]);
    // Ids 0-255 are the single bytes.
    const prefix: number[] = [];
    for (const token of new TextEncoder().encode('{"operation": "add",')) {
      const mask = new Uint32Array(grammar.maskWords);
      matcher.fillMask(mask);
      // The mask is exactly the set of tokens a matcher in the same state accepts.
      for (let t = 0; t < vocabulary.size; t += 7) {
        const probe = grammar.matcher([endToken]);
        for (const p of prefix) probe.acceptToken(p);
        expect(probe.acceptToken(t), `token ${t} after ${prefix.length}`).toBe((mask[t >>> 5]! & (1 << (t & 31))) !== 0);
      }
      expect(mask[token >>> 5]! & (1 << (token & 31)), String.fromCharCode(token)).not.toBe(0);
      expect(matcher.acceptToken(token)).toBe(true);
      prefix.push(token);
    }
    // After `{"operation": "add",` the key "operation" is used; `}` is refused (a, b are required).
    const close = vocabulary.tokenBytes.findIndex((b) => b !== null && b.length === 1 && b[0] === 0x7d);
    expect(matcher.acceptToken(close)).toBe(false);
  });

  it('rolls back to an earlier state', () => {
    const grammar = grammarOf({ type: 'boolean' });
    const matcher = grammar.matcher([endToken]);
    const t = vocabulary.tokenBytes.findIndex((b) => b !== null && new TextDecoder().decode(b) === 'true');
    expect(matcher.acceptToken(t)).toBe(true);
    expect(matcher.isTerminated()).toBe(true);
    matcher.rollback(1);
    expect(matcher.isTerminated()).toBe(false);
    const f = vocabulary.tokenBytes.findIndex((b) => b !== null && new TextDecoder().decode(b) === 'false');
    expect(matcher.acceptToken(f)).toBe(true);
  });
});
