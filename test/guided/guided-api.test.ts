/**
 * `weft/guided`, the grammar-level API: compileJsonSchema, accepts / acceptsPrefix, matchers and
 * their masks over the demo model's real vocabulary (models/weft-demo, 1,536 tokens).
 */
import { Ajv } from 'ajv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import { compileJsonSchema, Vocabulary, applyMask } from '../../src/guided/public.js';
import { loadText } from '../../src/text/load-text.js';
import type { Tokenizer } from '../../src/text/types.js';
import { sampleText } from './synthetic-vocabulary.js';

const root = join(import.meta.dirname, '..', '..');
const demoDir = join(root, 'models', 'weft-demo');
const VOCAB = 1536;

/** The schema, as zod / pydantic write it (strings bounded so a random walk ends). */
const TRIP = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 12 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    start: { type: 'string', format: 'date' },
    budget: { anyOf: [{ type: 'number', exclusiveMinimum: 0, maximum: 10000 }, { type: 'null' }] },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]{1,8}$' }, maxItems: 3 },
  },
  required: ['city', 'days', 'start', 'budget'],
  additionalProperties: false,
};

const bit = (mask: Uint32Array, t: number): boolean => (mask[t >>> 5]! & (1 << (t & 31))) !== 0;

describe('weft/guided', () => {
  let tokenizer: Tokenizer;
  let vocabulary: Vocabulary;
  let eos: number;
  beforeAll(async () => {
    ({ tokenizer } = await loadText(demoDir));
    vocabulary = Vocabulary.fromTokenizer(tokenizer, VOCAB);
    eos = tokenizer.tokenToId('<|im_end|>') ?? tokenizer.tokenToId('<|endoftext|>')!;
  });

  it('is a package entry: package.json exports ./guided, built from src/guided/public.ts', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { import: { default: string } }> };
    expect(pkg.exports['./guided']?.import.default).toBe('./dist/guided.js');
    expect(readFileSync(join(root, 'tsup.config.ts'), 'utf8')).toContain("guided: 'src/guided/public.ts'");
  });

  it('accepts and acceptsPrefix', () => {
    const grammar = compileJsonSchema(TRIP);
    expect(grammar.accepts('{"city":"Oslo","days":3,"start":"2025-06-01","budget":null}')).toBe(true);
    expect(grammar.accepts('{"city": "Oslo", "days": 7, "start": "2024-02-29", "budget": 99.5, "tags": ["fjord"]}')).toBe(true);
    expect(grammar.accepts('{"city":"Oslo","days":8,"start":"2025-06-01","budget":null}')).toBe(false);
    expect(grammar.accepts('{"city":"","days":3,"start":"2025-06-01","budget":null}')).toBe(false);
    expect(grammar.accepts('{"city":"Oslo","days":3,"start":"2025-02-29","budget":null}')).toBe(false);
    expect(grammar.accepts('{"city":"Oslo","days":3,"start":"2025-06-01","budget":0}')).toBe(false);
    expect(grammar.accepts('{"city":"Oslo","days":3,"start":"2025-06-01","budget":null,"tags":["Fjord"]}')).toBe(false);
    expect(grammar.acceptsPrefix('{"city":"Oslo","days":')).toBe(true);
    expect(grammar.acceptsPrefix('{"city":"Oslo","days":9')).toBe(false);
    expect(grammar.acceptsPrefix('{"city":"Oslo","days":3,"start":"2025-1')).toBe(true);
    expect(grammar.acceptsPrefix('{"city":"Oslo","days":3,"start":"2025-13')).toBe(false);
    expect(grammar.accepts('{"city":"Oslo","days":3,"start":"2025-06-01","budget":null')).toBe(false);
  });

  it("over the demo model's vocabulary, each mask is exactly the tokens the matcher takes, along a tokenised valid text", () => {
    const grammar = compileJsonSchema(TRIP);
    const text = '{"city": "Bergen", "days": 5, "start": "2025-12-31", "budget": 1250.75, "tags": ["rain", "fish"]}';
    const tokens = tokenizer.encode(text, { addSpecialTokens: false });
    const matcher = grammar.matcher(vocabulary, { endTokenIds: [eos] });
    for (const token of [...tokens, eos]) {
      const mask = matcher.allowedTokens();
      let allowed = 0;
      for (let t = 0; t < VOCAB; t++) {
        expect(bit(mask, t), `token ${t} (${JSON.stringify(tokenizer.idToToken(t))})`).toBe(matcher.allows(t));
        if (bit(mask, t)) allowed++;
      }
      expect(allowed).toBeGreaterThan(0);
      expect(bit(mask, token), `the text's token ${JSON.stringify(tokenizer.idToToken(token))}`).toBe(true);
      // End only where the value may end.
      expect(bit(mask, eos)).toBe(matcher.canEnd());
      expect(matcher.acceptToken(token)).toBe(true);
    }
    expect(matcher.isComplete()).toBe(true);
    // The same walk refuses a token that breaks a bound: "days": 8.
    const bad = grammar.matcher(vocabulary, { endTokenIds: [eos] });
    const prefix = tokenizer.encode('{"city": "Bergen", "days": ', { addSpecialTokens: false });
    expect(bad.acceptTokens(prefix)).toBe(prefix.length);
    const eight = tokenizer.encode('8', { addSpecialTokens: false });
    expect(bad.acceptTokens(eight)).toBe(0);
    const mask = bad.allowedTokens();
    for (const digit of '1234567') expect(bit(mask, tokenizer.encode(digit, { addSpecialTokens: false })[0]!), digit).toBe(true);
    for (const digit of '0089') expect(bit(mask, tokenizer.encode(digit, { addSpecialTokens: false })[0]!), digit).toBe(false);
  });

  it('60 seeded random walks over the demo vocabulary all end, parse and validate with ajv', () => {
    const grammar = compileJsonSchema(TRIP);
    const validate = new Ajv({ strict: false }).compile(TRIP);
    const seen = new Set<number>();
    for (let seed = 1; seed <= 60; seed++) {
      const matcher = grammar.matcher(vocabulary, { endTokenIds: [eos] });
      const walker = { fillMask: (m: Uint32Array) => matcher.fillMask(m), acceptToken: (t: number) => matcher.acceptToken(t), isTerminated: () => matcher.isComplete() };
      const { text, ended } = sampleText(walker, vocabulary, eos, seed, 400);
      expect(ended, text).toBe(true);
      const value = JSON.parse(text) as { days: number; start: string };
      expect(validate(value), `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(new Date(`${value.start}T00:00:00Z`).toISOString().slice(0, 10), text).toBe(value.start);
      seen.add(value.days);
    }
    expect(seen.size).toBeGreaterThan(3);
  });

  it('applyMask, rollback, acceptTokens and misuse', () => {
    const grammar = compileJsonSchema({ type: 'integer', minimum: 10, maximum: 19 });
    const matcher = grammar.matcher(vocabulary, { endTokenIds: [eos] });
    const one = tokenizer.encode('1', { addSpecialTokens: false })[0]!;
    const two = tokenizer.encode('2', { addSpecialTokens: false })[0]!;
    const logits = new Float32Array(VOCAB).fill(1);
    applyMask(logits, 0, VOCAB, matcher.allowedTokens());
    expect(logits[one]).toBe(1);
    expect(logits[two]).toBe(-Infinity);
    expect(matcher.acceptToken(two)).toBe(false);
    expect(matcher.acceptToken(one)).toBe(true);
    expect(matcher.canEnd()).toBe(false);
    expect(matcher.acceptToken(two)).toBe(true);
    expect(matcher.canEnd()).toBe(true);
    matcher.rollback(1);
    expect(matcher.canEnd()).toBe(false);
    matcher.rollback(5);
    expect(matcher.acceptTokens([one, one, eos])).toBe(3);
    expect(matcher.isComplete()).toBe(true);
    expect(() => matcher.fillMask(new Uint32Array(2))).toThrow(InvalidOptionError);
    expect(() => compileJsonSchema({}, { whitespace: 'loose' as 'compact' })).toThrow(InvalidOptionError);
    expect(() => compileJsonSchema({ type: 'string', format: 'iri' }, { where: 'tools[0].parameters' })).toThrow(/tools\[0\]\.parameters\.format/);
  });

  it("undeclaredProperties: 'schema' takes keys additionalProperties allows; 'declared' (generation's default) only declared ones", () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    const text = '{"a":1,"extra":[true,{"x":null}]}';
    expect(compileJsonSchema(schema).accepts(text)).toBe(false);
    expect(compileJsonSchema(schema, { undeclaredProperties: 'schema' }).accepts(text)).toBe(true);
    expect(compileJsonSchema({ ...schema, additionalProperties: { type: 'boolean' } }, { undeclaredProperties: 'schema' }).accepts(text)).toBe(false);
    // A declared key is never repeated as an "other" key, nor written with escapes as one.
    expect(compileJsonSchema(schema, { undeclaredProperties: 'schema' }).accepts('{"a":1,"a":2}')).toBe(false);
    expect(compileJsonSchema(schema, { undeclaredProperties: 'schema' }).accepts('{"a":1,"\\u0061":2}')).toBe(false);
  });
});
