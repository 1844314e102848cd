/**
 * The JSON-schema keywords beyond the basic suite (issue 30): numeric bounds, multipleOf, pattern,
 * format, prefixItems / items false, type arrays, nullable unions, allOf, $ref (pointers, anchors,
 * recursion), minProperties / maxProperties, unions of several object / array / string options,
 * flexible whitespace. Each: texts accepted and refused (checked against ajv where ajv checks the
 * keyword, against node:net / Date for formats), random walks over a 4000-token vocabulary whose
 * every ended text validates, texts streamed in random token chunks, refusals by name.
 */
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { isIPv4, isIPv6 } from 'node:net';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import { END_STACK, Stack } from '../../src/guided/automaton.js';
import { CompiledGrammar } from '../../src/guided/grammar.js';
import { valueStart } from '../../src/guided/json-frames.js';
import { compileSchema } from '../../src/guided/json-schema.js';
import { compileJsonSchema } from '../../src/guided/public.js';
import { sampleText, syntheticVocabulary } from './synthetic-vocabulary.js';

const { vocabulary, endToken } = syntheticVocabulary(4000, 3, { pieces: ['2024-', '-02-', 'T12:', ':00Z', '192.', '168.', '::', 'ff', '@example.com', '.com', 'abc', '-12', '1.5', '0.25', '-0.', '100', '999', 'P1Y', 'T5S', 'PT', '3W'] });
const ajv = new Ajv({ strict: false, validateFormats: false });
const ajv2020 = new Ajv2020({ strict: false, validateFormats: false });
/** A validator for the case: draft 2020-12 where it uses prefixItems, its own check for draft 4's boolean exclusive bounds, else draft 7. */
function validatorOf(schema: Record<string, unknown>, check?: (v: unknown) => boolean): { (v: unknown): boolean; errors?: unknown } {
  if (check !== undefined) return check;
  return (JSON.stringify(schema).includes('prefixItems') ? ajv2020 : ajv).compile(schema);
}

function grammarOf(schema: unknown, whitespace: 'compact' | 'flexible' = 'compact'): CompiledGrammar {
  return new CompiledGrammar(vocabulary, new Stack(valueStart(compileSchema(schema, 'schema', 'json', { whitespace })), END_STACK));
}

/** Independent format checks (not the grammar's regexes). */
const daysIn = (y: number, m: number): number => new Date(Date.UTC(y, m, 0)).getUTCDate();
function validDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo);
}
function validTime(s: string): boolean {
  const m = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/.exec(s);
  return m !== null && Number(m[1]) < 24 && Number(m[2]) < 60 && Number(m[3]) < 61 && (m[6] === undefined || (Number(m[6]) < 24 && Number(m[7]) < 60));
}
const FORMAT_CHECKS: Record<string, (s: string) => boolean> = {
  date: validDate,
  time: validTime,
  'date-time': (s) => /^.{10}[Tt]/.test(s) && validDate(s.slice(0, 10)) && validTime(s.slice(11)),
  ipv4: (s) => isIPv4(s),
  ipv6: (s) => isIPv6(s),
  uuid: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s),
  email: (s) => /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(s) && !s.startsWith('.') && !s.includes('..') && !s.includes('.@'),
  hostname: (s) => s.length <= 253 && s.split('.').every((l) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(l)),
  uri: (s) => /^[A-Za-z][A-Za-z0-9+.-]*:[^\s"<>\\^`{|}]*$/.test(s) && !/%(?![0-9a-fA-F]{2})/.test(s),
  'uri-reference': (s) => /^[^\s"<>\\^`{|}]*$/.test(s) && !/%(?![0-9a-fA-F]{2})/.test(s),
  duration: (s) => /^P(?!$)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$|^P\d+W$/.test(s) && !s.endsWith('T'),
};
const formatsOf = (v: unknown, schema: { format?: string }): boolean => schema.format === undefined || (typeof v === 'string' && FORMAT_CHECKS[schema.format]!(v));

/** Schema, texts the grammar accepts, texts it refuses (each checked against ajv / the format checks too). */
const CASES: { name: string; schema: Record<string, unknown>; accept: string[]; refuse: string[]; check?: (v: unknown) => boolean }[] = [
  { name: 'integer minimum/maximum', schema: { type: 'integer', minimum: 1, maximum: 7 }, accept: ['1', '7', '3'], refuse: ['0', '8', '-1', '10', '1.0', '07'] },
  { name: 'integer exclusive bounds, negative, multipleOf', schema: { type: 'integer', exclusiveMinimum: -5, exclusiveMaximum: 100, multipleOf: 3 }, accept: ['-3', '0', '99', '-0', '96'], refuse: ['-6', '102', '100', '1', '-5', '-9'] },
  { name: 'integer fractional bounds', schema: { type: 'integer', minimum: 0.5, maximum: 2.5 }, accept: ['1', '2'], refuse: ['0', '3', '0.5'] },
  { name: 'integer large bounds', schema: { type: 'integer', minimum: 1000000000000, maximum: 1000000000005 }, accept: ['1000000000000', '1000000000005'], refuse: ['999999999999', '1000000000006', '10000000000000'] },
  { name: 'number fractional bounds', schema: { type: 'number', minimum: -1.5, maximum: 2.25 }, accept: ['-1.5', '2.25', '0.123', '-1.49', '2.2500'], refuse: ['-1.51', '2.26', '3', '2.250001', '-2'] },
  { name: 'number exclusiveMinimum 0', schema: { type: 'number', exclusiveMinimum: 0 }, accept: ['0.000000000000001', '5', '0.5'], refuse: ['0', '-0', '-0.1', '0.0', '0.000'] },
  { name: 'number multipleOf 0.25', schema: { type: 'number', multipleOf: 0.25, maximum: 1 }, accept: ['0.25', '0.5', '1', '-0.75', '0.50'], refuse: ['0.1', '1.25', '0.3'] },
  { name: 'draft 4 boolean exclusiveMaximum', schema: { type: 'number', maximum: 10, exclusiveMaximum: true, minimum: 0, exclusiveMinimum: false }, accept: ['0', '9.999', '5'], refuse: ['10', '10.0', '-0.1'], check: (v) => typeof v === 'number' && v >= 0 && v < 10 },
  { name: 'pattern, anchored, bounded quantifier', schema: { type: 'string', pattern: '^[a-z]+-\\d{2,3}$' }, accept: ['"ab-12"', '"x-999"'], refuse: ['"ab-1"', '"AB-12"', '"ab-1234"', '"ab-12 "'] },
  { name: 'pattern, unanchored', schema: { type: 'string', pattern: 'cat|dog' }, accept: ['"a cat!"', '"dog"', '"hotdogs"'], refuse: ['"cow"', '""'] },
  { name: 'pattern, groups and alternation', schema: { type: 'string', pattern: '^(?:ab|cd)+(x|y)?$' }, accept: ['"ab"', '"abcdx"', '"cdaby"'], refuse: ['"a"', '"abx y"', '"x"'] },
  { name: 'pattern, classes and escapes', schema: { type: 'string', pattern: '^[^\\s"]\\w*\\.\\d$' }, accept: ['"a_1.2"', '"é.3"'], refuse: ['" a.1"', '"a.b"', '"a.12"'] },
  { name: 'pattern, unicode property and escapes in JSON', schema: { type: 'string', pattern: '^\\p{Lu}\\p{Ll}+$' }, accept: ['"Élan"', '"\\u00c9lan"', '"Ab"'], refuse: ['"élan"', '"A"', '"A1"'] },
  { name: 'pattern, astral character as a surrogate pair escape', schema: { type: 'string', pattern: '^😀+$' }, accept: ['"😀"', '"\\ud83d\\ude00😀"'], refuse: ['"\\ud83d"', '"\\ude00"', '""'] },
  { name: 'pattern with maxLength', schema: { type: 'string', pattern: '^a+b$', maxLength: 4 }, accept: ['"ab"', '"aaab"'], refuse: ['"aaaab"', '"b"'] },
  { name: 'format date', schema: { type: 'string', format: 'date' }, accept: ['"2024-02-29"', '"2023-12-31"', '"2000-02-29"'], refuse: ['"2023-02-29"', '"1900-02-29"', '"2023-13-01"', '"2023-04-31"', '"2023-4-01"'] },
  { name: 'format time', schema: { type: 'string', format: 'time' }, accept: ['"12:00:00Z"', '"23:59:59.5+01:00"'], refuse: ['"24:00:00Z"', '"12:00:00"', '"12:60:00Z"'] },
  { name: 'format date-time', schema: { type: 'string', format: 'date-time' }, accept: ['"2024-02-29T12:00:00Z"', '"2024-02-29T23:59:59.123+05:30"'], refuse: ['"2024-02-29T24:00:00Z"', '"2024-02-29T12:00:00"', '"2024-02-30T12:00:00Z"'] },
  { name: 'format duration', schema: { type: 'string', format: 'duration' }, accept: ['"P3Y6M4DT12H30M5S"', '"PT5S"', '"P2W"', '"P1M"'], refuse: ['"P"', '"PT"', '"P1H"', '"P1YT"'] },
  { name: 'format email', schema: { type: 'string', format: 'email' }, accept: ['"a.b@example.com"', '"x+y@a-b.co"'], refuse: ['"a@b"', '"@x.com"', '"a..b@x.com"'] },
  { name: 'format hostname', schema: { type: 'string', format: 'hostname' }, accept: ['"example.com"', '"a-b.c"', '"localhost"'], refuse: ['"-a.com"', '"a..b"', '"a_b.com"'] },
  { name: 'format ipv4', schema: { type: 'string', format: 'ipv4' }, accept: ['"192.168.0.1"', '"0.0.0.0"', '"255.255.255.255"'], refuse: ['"256.1.1.1"', '"01.1.1.1"', '"1.1.1"'] },
  { name: 'format ipv6', schema: { type: 'string', format: 'ipv6' }, accept: ['"::1"', '"2001:db8::8a2e:370:7334"', '"::ffff:192.168.1.1"', '"1:2:3:4:5:6:7:8"', '"::"', '"fe80::"'], refuse: ['"1:2:3:4:5:6:7:8:9"', '"1::2::3"', '"12345::"', '":1"'] },
  { name: 'format uuid', schema: { type: 'string', format: 'uuid' }, accept: ['"123e4567-e89b-12d3-a456-426614174000"'], refuse: ['"123e4567e89b12d3a456426614174000"', '"123e4567-e89b-12d3-a456-42661417400g"'] },
  { name: 'prefixItems, items false', schema: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string', maxLength: 3 }], items: false }, accept: ['[1,"a"]', '[1]', '[]', '[1, "abc"]'], refuse: ['[1,"a",2]', '["a"]', '[1,2]'] },
  { name: 'prefixItems then items', schema: { type: 'array', prefixItems: [{ type: 'string', maxLength: 2 }], items: { type: 'boolean' }, minItems: 2 }, accept: ['["a",true]', '["",false,true]'], refuse: ['["a"]', '[true,true]', '["a",1]'] },
  { name: 'draft 4 items array, additionalItems', schema: { type: 'array', items: [{ type: 'integer' }], additionalItems: { type: 'boolean' } }, accept: ['[1,true,false]', '[1]'], refuse: ['[1,2]', '[true]'] },
  { name: 'type array with bounds', schema: { type: ['integer', 'null'], minimum: 0 }, accept: ['null', '0', '5'], refuse: ['-1', '"a"'] },
  { name: 'nullable anyOf with a string', schema: { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'null' }] }, accept: ['null', '"ab"'], refuse: ['"abcd"', '1'] },
  { name: 'nullable anyOf with an enum', schema: { anyOf: [{ enum: ['a', 'b'] }, { type: 'null' }] }, accept: ['null', '"a"'], refuse: ['"c"'] },
  { name: 'anyOf of bounded numbers', schema: { anyOf: [{ type: 'integer', maximum: -10 }, { type: 'number', minimum: 10, maximum: 20 }] }, accept: ['-10', '-11', '10.5', '20'], refuse: ['0', '-9', '20.1', '-10.5'] },
  { name: 'anyOf of objects', schema: { anyOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false }, { type: 'object', properties: { b: { type: 'boolean' } }, required: ['b'], additionalProperties: false }] }, accept: ['{"a":1}', '{"b":true}'], refuse: ['{"a":true}', '{}', '{"c":1}'] },
  { name: 'anyOf of formats', schema: { anyOf: [{ type: 'string', format: 'date' }, { type: 'string', format: 'ipv4' }] }, accept: ['"2024-01-01"', '"1.2.3.4"'], refuse: ['"2024-1.2"', '"x"'] },
  { name: 'allOf of objects', schema: { allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { properties: { b: { type: 'string', maxLength: 2 } }, required: ['b'] }] }, accept: ['{"a":1,"b":"x"}', '{"b":"","a":-3}'], refuse: ['{"a":1}', '{"a":1,"b":"xyz"}'] },
  { name: 'allOf of bounds and patterns', schema: { allOf: [{ type: 'integer', minimum: 0 }, { maximum: 10 }, { multipleOf: 2 }] }, accept: ['0', '10', '4'], refuse: ['11', '-2', '3'] },
  { name: 'allOf of two patterns', schema: { type: 'string', allOf: [{ pattern: '^a' }, { pattern: 'z$' }] }, accept: ['"az"', '"abcz"'], refuse: ['"a"', '"bz"'] },
  { name: 'allOf with additionalProperties false', schema: { allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: false }, { properties: { a: { minimum: 1 }, b: { type: 'integer' } } }] }, accept: ['{"a":1}', '{}'], refuse: ['{"a":0}', '{"b":1}'] },
  { name: 'allOf with a union', schema: { allOf: [{ type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'] }, { anyOf: [{ properties: { kind: { const: 'x' } } }, { properties: { kind: { const: 'y' } } }] }] }, accept: ['{"kind":"x"}', '{"kind":"y"}'], refuse: ['{"kind":"z"}', '{}'] },
  { name: '$ref with siblings', schema: { $defs: { n: { type: 'integer' } }, $ref: '#/$defs/n', minimum: 3 }, accept: ['3', '40'], refuse: ['2', '"a"'] },
  { name: 'recursive $ref', schema: { $defs: { node: { type: 'object', properties: { v: { type: 'integer' }, next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } }, required: ['next'], additionalProperties: false } }, $ref: '#/$defs/node' }, accept: ['{"next":null}', '{"next":{"v":1,"next":{"next":null}}}'], refuse: ['{"next":1}', '{}'] },
  { name: 'recursive root ref, definitions, escaped pointer', schema: { definitions: { 'a/b': { type: 'boolean' } }, type: 'array', items: { anyOf: [{ $ref: '#' }, { $ref: '#/definitions/a~1b' }] }, maxItems: 2 }, accept: ['[]', '[true,[false,[]]]'], refuse: ['[1]', '[true,true,true]'] },
  { name: '$ref to an $anchor', schema: { $defs: { x: { $anchor: 'short', type: 'string', maxLength: 2 } }, properties: { s: { $ref: '#short' } }, required: ['s'], type: 'object' }, accept: ['{"s":"ab"}'], refuse: ['{"s":"abc"}'] },
  { name: 'minProperties/maxProperties, declared', schema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' } }, minProperties: 2, maxProperties: 2 }, accept: ['{"a":1,"b":2}', '{"c":1,"a":2}'], refuse: ['{"a":1}', '{"a":1,"b":2,"c":3}'] },
  { name: 'minProperties/maxProperties, free keys', schema: { type: 'object', additionalProperties: { type: 'integer' }, minProperties: 1, maxProperties: 2 }, accept: ['{"x":1}', '{"x":1,"y":2}'], refuse: ['{}', '{"x":1,"y":2,"z":3}'] },
  { name: 'minLength counts code points: a surrogate pair escape is one', schema: { type: 'string', minLength: 2, maxLength: 3 }, accept: ['"ab"', '"😀😀"', '"\\ud83d\\ude00x"', '"\\u00e9a"'], refuse: ['"\\ud83d\\ude00"', '"\\ud83da"', '"\\ude00ab"', '"a"', '"abcd"'] },
  { name: 'drafts 4-7 ignore keywords beside $ref', schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { n: { type: 'integer' } }, properties: { a: { $ref: '#/definitions/n', type: 'string' } }, required: ['a'] }, accept: ['{"a":10}'], refuse: ['{"a":"x"}'], check: (v) => Number.isInteger((v as { a: unknown }).a) },
  { name: 'patternProperties', schema: { type: 'object', patternProperties: { '^x-': { type: 'string', maxLength: 3 }, 'n$': { type: 'integer', minimum: 0 } }, additionalProperties: false, maxProperties: 3 }, accept: ['{"x-a":"s"}', '{"run":3}', '{}', '{"x-":"","an":0}'], refuse: ['{"x-a":1}', '{"run":-3}', '{"x-n":3}', '{"x-n":"s"}', '{"other":1}'] },
  { name: 'patternProperties beside additionalProperties', schema: { type: 'object', patternProperties: { '^[a-z]+$': { type: 'boolean' } }, additionalProperties: { type: 'integer' }, maxProperties: 2 }, accept: ['{"ab":true}', '{"A1":1,"b":false}'], refuse: ['{"ab":1}', '{"A1":true}'] },
  { name: 'format uri', schema: { type: 'string', format: 'uri' }, accept: ['"https://example.com/a/b?x=1#f"', '"mailto:a@b.co"', '"urn:isbn:0451450523"', '"http://u:p@h:80/p%20q"'], refuse: ['"/relative"', '"a b"', '"http://exa mple.com"', '"1http://x"'] },
  { name: 'format uri-reference', schema: { type: 'string', format: 'uri-reference' }, accept: ['"../x"', '"#frag"', '"//x.org/a"', '"https://e.com"', '""'], refuse: ['"a b"', '"%zz"'] },
  { name: 'enum filtered by its siblings', schema: { type: 'string', enum: ['a', 1, 'bb'], maxLength: 1 }, accept: ['"a"'], refuse: ['1', '"bb"'] },
  { name: 'non-keyword keys are annotations', schema: { type: 'integer', _format: 'uuid', 'x-kind': 1, maximum: 3 }, accept: ['3'], refuse: ['4'] },
];

const FREE_TEXT = new Set(['pattern, unanchored', 'format email', 'allOf of two patterns', 'format uri', 'format uri-reference', 'patternProperties beside additionalProperties', 'patternProperties']);

describe('JSON-schema keywords (issue 30)', () => {
  for (const { name, schema, accept, refuse, check } of CASES) {
    it(`${name}: accepts and refuses exactly these texts; ajv agrees`, () => {
      const grammar = compileJsonSchema(schema);
      const validate = validatorOf(schema, check);
      for (const text of accept) {
        expect(grammar.accepts(text), `accepts ${text}`).toBe(true);
        expect(validate(JSON.parse(text)) && formatsOf(JSON.parse(text), schema), `ajv on ${text}`).toBe(true);
      }
      for (const text of refuse) expect(grammar.accepts(text), `refuses ${text}`).toBe(false);
    });
  }

  for (const { name, schema, check } of CASES) {
    it(`${name}: 150 random walks over a 4000-token vocabulary end valid`, () => {
      const validate = validatorOf(schema, check);
      const grammar = grammarOf(schema);
      let ended = 0;
      for (let seed = 1; seed <= 150; seed++) {
        const { text, ended: done } = sampleText(grammar.matcher([endToken]), vocabulary, endToken, seed, 300);
        if (!done) continue;
        ended++;
        const value: unknown = JSON.parse(text);
        if (!validate(value)) throw new Error(`${text}: ${JSON.stringify(validate.errors)}`);
        if (!formatsOf(value, schema)) throw new Error(`${text}: not a valid ${String(schema.format)}`);
      }
      // Free text inside a string (an unanchored pattern, an email's local part, the middle of ^a...z$)
      // rarely meets its closing quote in a uniform walk over 4000 tokens; everything else ends.
      expect(ended).toBeGreaterThan(FREE_TEXT.has(name) ? 0 : 100);
    });
  }

  it('streams: each accepted text, cut into random token chunks, is accepted token by token; each refused one is refused', () => {
    const trie = vocabulary.trie;
    /** A tokenisation of `text` that takes a random-length known token at each position. */
    const randomTokens = (text: string, seed: number): number[] => {
      let state = seed;
      const bytes = new TextEncoder().encode(text);
      const out: number[] = [];
      for (let i = 0; i < bytes.length; ) {
        const ends: [number, number][] = [];
        let node = 0;
        for (let j = i; j < bytes.length; j++) {
          let child = trie.firstChild[node]!;
          while (child !== -1 && trie.byteOf[child] !== bytes[j]) child = trie.nextSibling[child]!;
          if (child === -1) break;
          node = child;
          if (trie.tokenAt[node] !== -1) ends.push([trie.tokenAt[node]!, j + 1]);
        }
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        const [token, next] = ends[state % ends.length]!;
        out.push(token);
        i = next;
      }
      return out;
    };
    for (const { schema, accept, refuse } of CASES) {
      const grammar = compileJsonSchema(schema);
      for (let seed = 1; seed <= 8; seed++) {
        for (const text of [...accept, ...refuse]) {
          const matcher = grammar.matcher(vocabulary, { endTokenIds: [endToken] });
          const tokens = [...randomTokens(text, seed), endToken];
          expect(matcher.acceptTokens(tokens) === tokens.length, `${text} in chunks (seed ${seed})`).toBe(accept.includes(text));
        }
      }
    }
  });

  it('integer bounds: accepts(n) is exactly min <= n <= max and n % m === 0 (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 7 }), fc.boolean(), fc.integer({ min: -1600, max: 1600 }), (low, span, m, exclusive, n) => {
        const schema = exclusive ? { type: 'integer', exclusiveMinimum: low, exclusiveMaximum: low + span + 2, multipleOf: m } : { type: 'integer', minimum: low, maximum: low + span, multipleOf: m };
        const inside = exclusive ? n > low && n < low + span + 2 : n >= low && n <= low + span;
        let grammar;
        try {
          grammar = compileJsonSchema(schema);
        } catch (error) {
          // Only when no multiple lies inside.
          expect(error).toBeInstanceOf(InvalidOptionError);
          return;
        }
        expect(grammar.accepts(String(n))).toBe(inside && n % m === 0);
        // Every prefix of an allowed value is allowed; a digit string that cannot lead anywhere is not.
        if (inside && n % m === 0) for (let k = 1; k <= String(n).length; k++) expect(grammar.acceptsPrefix(String(n).slice(0, k))).toBe(true);
      }),
      { numRuns: 400, seed: 30 },
    );
  });

  it('number bounds: fractions compare as exact decimals (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -20000, max: 20000 }), fc.integer({ min: -20000, max: 20000 }), fc.integer({ min: -30000, max: 30000 }), (a, b, x) => {
        const [lo, hi] = [Math.min(a, b) / 1000, Math.max(a, b) / 1000];
        if (lo === hi) {
          expect(() => compileJsonSchema({ type: 'number', exclusiveMinimum: lo, maximum: hi })).toThrow(InvalidOptionError);
          return;
        }
        const grammar = compileJsonSchema({ type: 'number', exclusiveMinimum: lo, maximum: hi });
        const value = x / 1000;
        expect(grammar.accepts(String(value)), `${value} in (${lo}, ${hi}]`).toBe(value > lo && value <= hi);
      }),
      { numRuns: 400, seed: 30 },
    );
  });

  it('masks over a bounded number only lead to values that can still be finished', () => {
    const grammar = grammarOf({ type: 'object', properties: { d: { type: 'integer', minimum: 1, maximum: 7 }, t: { type: 'number', minimum: 36.5, maximum: 37.25 } }, required: ['d', 't'], additionalProperties: false });
    for (let seed = 1; seed <= 200; seed++) {
      // fillMask throws on a dead end; every walk must end well within the budget.
      const { text, ended } = sampleText(grammar.matcher([endToken]), vocabulary, endToken, seed, 200);
      expect(ended, text).toBe(true);
      const { d, t } = JSON.parse(text) as { d: number; t: number };
      expect(d >= 1 && d <= 7 && Number.isInteger(d) && t >= 36.5 && t <= 37.25, text).toBe(true);
    }
  });

  it('flexible whitespace: any JSON whitespace between tokens; compact keeps at most one space after : and ,', () => {
    const schema = { type: 'object', properties: { a: { type: 'array', items: { type: 'integer', minimum: 0 } } }, required: ['a'] };
    const flexible = compileJsonSchema(schema, { whitespace: 'flexible' });
    const compact = compileJsonSchema(schema);
    for (const text of ['{"a":[1,2]}', '{"a": [1, 2]}']) {
      expect(flexible.accepts(text)).toBe(true);
      expect(compact.accepts(text)).toBe(true);
    }
    for (const text of ['{\n  "a" : [\n    1 ,\t2\n  ]\n}', '{ "a":[ ] }']) {
      expect(flexible.accepts(text), text).toBe(true);
      expect(compact.accepts(text), text).toBe(false);
    }
    expect(flexible.accepts('{"a":[-1]}')).toBe(false);
    const validate = ajv.compile(schema);
    const grammar = grammarOf(schema, 'flexible');
    for (let seed = 1; seed <= 100; seed++) {
      const { text, ended } = sampleText(grammar.matcher([endToken]), vocabulary, endToken, seed, 300);
      if (ended) expect(validate(JSON.parse(text)), text).toBe(true);
    }
  });

  it('a property whose schema is false is never written, also where undeclared keys are free', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' }, gone: false } };
    const validate = ajv.compile(schema);
    for (const undeclaredProperties of ['declared', 'schema'] as const) {
      const grammar = compileJsonSchema(schema, { undeclaredProperties });
      expect(grammar.accepts('{"a":1}')).toBe(true);
      expect(grammar.accepts('{"gone":1}'), undeclaredProperties).toBe(false);
      expect(grammar.accepts('{"a":1,"gone":null}'), undeclaredProperties).toBe(false);
      // A key that only starts like the banned one is another key.
      expect(grammar.accepts('{"gonex":1}')).toBe(undeclaredProperties === 'schema');
    }
    expect(validate({ gonex: 1 }) && !validate({ gone: 1 })).toBe(true);
  });

  it('refuses, by name, what it cannot enforce; a pathological pattern is a typed error, fast', () => {
    const refusals: [unknown, RegExp][] = [
      [{ type: 'string', pattern: '^(?=a)' }, /lookahead/],
      [{ type: 'string', pattern: '(?<!a)b' }, /lookbehind/],
      [{ type: 'string', pattern: '(a)\\1' }, /backreferences/],
      [{ type: 'string', pattern: '\\bword' }, /word-boundary/],
      [{ type: 'string', pattern: '[' }, /not a valid ECMAScript regular expression/],
      [{ type: 'string', format: 'iri' }, /format "iri"/],
      [{ not: { type: 'string' } }, /"not"/],
      [{ type: 'object', patternProperties: { a: {}, b: {}, c: {}, d: {}, e: {} } }, /at most 4 patterns/],
      [{ type: 'object', propertyNames: { maxLength: 2 } }, /"propertyNames"/],
      [{ type: 'object', dependentRequired: { a: ['b'] } }, /"dependentRequired"/],
      [{ if: { type: 'string' }, then: { maxLength: 2 } }, /"if"/],
      [{ type: 'array', uniqueItems: true }, /uniqueItems/],
      [{ type: 'array', contains: { type: 'integer' } }, /"contains"/],
      [{ type: 'integer', minimum: 1e20 }, /at most 15 digits/],
      [{ type: 'number', multipleOf: 1e-20 }, /multipleOf/],
      [{ allOf: [{ type: 'string' }, { type: 'integer' }] }, /admits no value/],
      [{ $ref: 'https://example.com/schema.json' }, /only local refs/],
      [{ $defs: { a: { allOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' }, /deeper than/],
      [{ type: 'string', pattern: '^a{5}$', maxLength: 3 }, /cannot match within maxLength/],
    ];
    for (const [schema, message] of refusals) {
      expect(() => compileJsonSchema(schema, { where: 'responseFormat.schema' }), JSON.stringify(schema)).toThrow(InvalidOptionError);
      expect(() => compileJsonSchema(schema, { where: 'responseFormat.schema' }), JSON.stringify(schema)).toThrow(message);
    }
    expect(() => compileJsonSchema({ type: 'object', properties: { p: { type: 'string', pattern: '(?=x)' } } }, { where: 'responseFormat.schema' })).toThrow(/responseFormat\.schema\.properties\.p\.pattern/);
    const started = performance.now();
    expect(() => compileJsonSchema({ type: 'string', pattern: '((a{100}){100}){100}' })).toThrow(/too large/);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
