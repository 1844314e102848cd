/**
 * Masks with the free-run fast path (free-runs.ts) are exactly the set of
 * tokens a matcher accepts, at a 151,936-token vocabulary that also holds the
 * tokens the fast path must not take for granted: partial and invalid UTF-8,
 * escapes (whole and cut), quotes, control bytes, marker bytes.
 */
import { describe, expect, it } from 'vitest';
import { END_STACK, Stack, type Frame } from '../../src/guided/automaton.js';
import { CompiledGrammar, walkTrie, type GrammarMatcher } from '../../src/guided/grammar.js';
import { valueStart } from '../../src/guided/json-frames.js';
import { anyObjectSpec, compileSchema } from '../../src/guided/json-schema.js';
import { noCallStart, toolCallsStart } from '../../src/guided/call-modes.js';
import { toolGrammarOf } from '../../src/tool-formats/registry.js';
import { Vocabulary } from '../../src/guided/vocabulary.js';
import { syntheticVocabulary } from './synthetic-vocabulary.js';

const SIZE = 151_936;

/** The synthetic vocabulary with every 20th multi-byte token replaced by a tricky one. */
function trickyVocabulary(): { vocabulary: Vocabulary; endToken: number } {
  const { vocabulary, endToken } = syntheticVocabulary(SIZE, 3);
  const tokens = [...vocabulary.tokenBytes];
  const encoder = new TextEncoder();
  const text = encoder.encode('日本語のテキスト ünïcödé 😀🎉 ∑∫ \\"quoted\\" \\n\\t \\u00e9\\u12 "}, {" </think> <tool_call> <function=x> a=b {"k": 1}\n\t');
  const odd = [0x7f, 0x00, 0x1f, 0xc0, 0xc1, 0xf5, 0xff, 0x80, 0xbf];
  const surrogate = [0xed, 0xa0, 0x80];
  let state = 12345;
  const next = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 2 ** 32) * n);
  };
  const seen = new Set(tokens.map((t) => (t ? t.join(',') : '')));
  for (let id = 300; id < SIZE - 1; id += 20) {
    let bytes: number[];
    const kind = next(4);
    if (kind === 0) bytes = [...encoder.encode('ab'), odd[next(odd.length)]!, ...encoder.encode('c')];
    else if (kind === 1) bytes = [...encoder.encode('x'), ...surrogate.slice(0, 1 + next(3))];
    else {
      const start = next(text.length - 1);
      bytes = [...text.subarray(start, start + 1 + next(8))]; // often cut inside a character or an escape
    }
    const key = bytes.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    tokens[id] = Uint8Array.from(bytes);
  }
  return { vocabulary: new Vocabulary(tokens, SIZE), endToken };
}

const { vocabulary, endToken } = trickyVocabulary();
const grammarOf = (frame: Frame): CompiledGrammar => new CompiledGrammar(vocabulary, new Stack(frame, END_STACK));
const schemaGrammar = (schema: unknown): CompiledGrammar => grammarOf(valueStart(compileSchema(schema, 'schema')));

/** Feeds `text` byte by byte (ids 0-255 are the bytes). */
function at(grammar: CompiledGrammar, text: string | number[]): GrammarMatcher {
  const matcher = grammar.matcher([endToken]);
  for (const b of typeof text === 'string' ? new TextEncoder().encode(text) : text) expect(matcher.acceptToken(b), `byte ${b}`).toBe(true);
  return matcher;
}

/** The mask (fast path), the full-trie walk, and acceptToken over every token must agree. */
function expectExact(grammar: CompiledGrammar, matcher: GrammarMatcher): number {
  const mask = new Uint32Array(grammar.maskWords);
  matcher.fillMask(mask);
  const state = (matcher as unknown as { states: Stack[] }).states.at(-1)!;
  const reference = new Uint32Array(grammar.maskWords);
  walkTrie(vocabulary.trie, state, reference);
  let allowed = 0;
  const wrong: string[] = [];
  for (let t = 0; t < SIZE; t++) {
    const inMask = (mask[t >>> 5]! & (1 << (t & 31))) !== 0;
    const accepted = matcher.acceptToken(t);
    if (accepted) matcher.rollback(1);
    if (t !== endToken && inMask !== ((reference[t >>> 5]! & (1 << (t & 31))) !== 0)) wrong.push(`walk ${t}`);
    if (inMask !== accepted && wrong.length < 10) wrong.push(`${t} ${JSON.stringify([...(vocabulary.tokenBytes[t] ?? [])])}: mask ${inMask}, accepted ${accepted}`);
    if (inMask) allowed++;
  }
  expect(wrong).toEqual([]);
  return allowed;
}

describe('free-run masks at a 151,936-token vocabulary', () => {
  it('a free string (json_object key and value), inside an escape and a character', () => {
    const grammar = grammarOf(valueStart(anyObjectSpec()));
    for (const prefix of ['{"', '{"k', '{"k": "', '{"k": "v', '{"k": "\\', '{"k": "\\u00', '{"k": "é', [0x7b, 0x22, 0xe6], [0x7b, 0x22, 0xe6, 0x97], [0x7b, 0x22, 0xf0, 0x9f]]) {
      const allowed = expectExact(grammar, at(grammar, prefix));
      if (typeof prefix === 'string' && !prefix.endsWith('\\') && !prefix.endsWith('00')) expect(allowed, String(prefix)).toBeGreaterThan(100_000);
    }
  });

  it('strings with maxLength and minLength, at every length, and what follows the closing quote', () => {
    const grammar = schemaGrammar({ type: 'object', properties: { s: { type: 'string', minLength: 2, maxLength: 5 }, n: { type: 'integer' } }, required: ['s', 'n'] });
    for (const body of ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'a\\n', 'ééé', '日本語日']) expectExact(grammar, at(grammar, `{"s": "${body}`));
    const long = schemaGrammar({ type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 2 });
    for (const body of ['', 'x'.repeat(30), 'x'.repeat(39), 'x'.repeat(40)]) expectExact(long, at(long, `["${body}`));
  });

  it('text avoiding markers ("none", UTF-8 markers and a start-only one too) and reasoning up to </think>', () => {
    const avoid = grammarOf(noCallStart(toolGrammarOf('qwen3coder'), 'none'));
    for (const prefix of ['', 'hello ', '<tool_call', '<function', '<']) expectExact(avoid, at(avoid, prefix));
    const deepseek = grammarOf(noCallStart(toolGrammarOf('deepseek_v3'), 'none'));
    for (const prefix of ['', 'x <｜tool▁call', 'x <｜tool▁calls▁begin', '<']) expectExact(deepseek, at(deepseek, prefix));
    const pythonic = grammarOf(noCallStart(toolGrammarOf('pythonic'), 'optional'));
    for (const prefix of ['', ' \n', '\u00a0', 'ok [', '<think>x</think>', '<think>x</thi']) expectExact(pythonic, at(pythonic, prefix));
    const reasoning = grammarOf(toolCallsStart({ parser: 'hermes', grammar: toolGrammarOf('hermes'), tools: [{ type: 'function', function: { name: 'f' } }], choice: 'required', parallel: false, reasoning: 'open', reasoningExits: [] }));
    for (const prefix of ['', 'thinking ', '</think', '</thi', '<']) expectExact(reasoning, at(reasoning, prefix));
  });
});
