/**
 * The mistral, pythonic and deepseek_v3 call grammars, walked at random over synthetic vocabularies
 * (with the formats' special tokens, whose text the reply keeps, and without them, where the
 * markers are text): a forced call always parses with the matching parser into a call to a
 * declared tool with ajv-valid arguments, a named one calls that tool, parallel calls are several
 * valid calls, and "none" never yields a call even when the walk is drawn towards the markers; the
 * mask is exactly the set of tokens a matcher accepts; Python literals round-trip.
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { END_STACK, Frame, Stack, type Step } from '../../src/guided/automaton.js';
import { noCallStart, toolCallsStart, type ToolGuidance } from '../../src/guided/call-modes.js';
import { toolGrammarOf } from '../../src/tool-formats/registry.js';
import { CompiledGrammar } from '../../src/guided/grammar.js';
import { valueStart } from '../../src/guided/json-frames.js';
import { compileSchema, pythonLiteral } from '../../src/guided/json-schema.js';
import type { Vocabulary } from '../../src/guided/vocabulary.js';
import { createParserChain, createReasoningParser } from '../../src/parsers/index.js';
import { createToolParser } from '../../src/tool-formats/index.js';
import { DEEPSEEK_R1_THINK, QWEN3_THINK } from '../../src/parsers/reasoning/think.js';
import { parsePythonLiteral } from '../../src/parsers/python-literal.js';
import type { ToolDefinition } from '../../src/text/types.js';
import { syntheticVocabulary } from './synthetic-vocabulary.js';

const MISTRAL_SPECIALS = ['[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', '</s>'];
const DEEPSEEK_SPECIALS = ['<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>', '<｜tool▁call▁begin｜>', '<｜tool▁call▁end｜>', '<｜tool▁sep｜>'];
const PYTHON_SPECIALS = ['<|python_start|>', '<|python_end|>'];
const TOOL_NAMES = ['calculator', 'take_note', 'ping'];
/** Text pieces that make the formats' syntax (and the markers, for "none" to refuse) likely. */
const PIECES = [
  '<think>', '</think>', 'True', 'False', 'None', '```json\n', '\n```', 'function', '"name": "', '", "arguments": ', '=', '(', ')]', ')', ', ', '[',
  ' [', '\n[', '[{', '[TOOL_CALLS]', '[TOOL', '_CALLS]', '[ARGS]', '<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>', '<｜tool', '▁calls▁begin｜>',
  '<|python_start|>', '<|python', '_start|>', ...TOOL_NAMES, ...TOOL_NAMES.map((n) => `${n}(`), 'operation=', 'a=', 'b=', '"add"', '\\"', '\\\\',
];

const vocabularies = {
  /** Every marker a special token (mistral v11+, DeepSeek's, Llama 4's python tags). */
  specials: syntheticVocabulary(3000, 1, { specials: [...MISTRAL_SPECIALS, ...DEEPSEEK_SPECIALS, ...PYTHON_SPECIALS], pieces: PIECES }),
  /** Mistral before v11: `[TOOL_CALLS]` is special, there is no `[ARGS]`. */
  mistralV3: syntheticVocabulary(3000, 2, { specials: ['[TOOL_CALLS]', '</s>'], pieces: PIECES }),
  /** No special tokens: every marker is text. */
  plain: syntheticVocabulary(3000, 3, { pieces: PIECES }),
};

const tools: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      parameters: { type: 'object', properties: { operation: { type: 'string', enum: ['add', 'multiply'] }, a: { type: 'number' }, b: { type: 'integer' } }, required: ['operation', 'a', 'b'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'take_note',
      parameters: {
        type: 'object',
        properties: {
          title: { type: 'string', maxLength: 8 },
          tags: { type: 'array', maxItems: 3, items: { enum: ['home', 'work', null, true] } },
          urgent: { type: 'boolean' },
          due: { anyOf: [{ type: 'null' }, { type: 'string', maxLength: 4 }] },
          meta: { type: 'object', properties: { n: { type: 'integer' }, ok: { type: 'boolean' } }, required: ['ok'] },
        },
        required: ['title'],
      },
    },
  },
  // No arguments (a tool without parameters takes any object, with strings a random walk never closes).
  { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {}, additionalProperties: false } } },
];
const ajv = new Ajv({ strict: false });
const validators = new Map(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters ?? { type: 'object' })]));

type Format = 'mistral' | 'pythonic' | 'deepseek_v3';
const FORMATS: Format[] = ['mistral', 'pythonic', 'deepseek_v3'];

interface Vocab {
  readonly vocabulary: Vocabulary;
  readonly endToken: number;
  /** The text of each special token (the reply keeps it with a tool parser). */
  readonly specialText: ReadonlyMap<number, Uint8Array>;
}

const grammarOf = (vocab: Vocab, start: Frame): CompiledGrammar => new CompiledGrammar(vocab.vocabulary, new Stack(start, END_STACK), vocab.specialText);
const specialTexts = (vocab: Vocab): Set<string> => new Set([...vocab.specialText.values()].map((b) => new TextDecoder().decode(b)));

/** A forced call (toolChoice "required", or `only`), as a pipeline builds it for this vocabulary. */
function forced(vocab: Vocab, format: string, only?: string, reasoning: ToolGuidance['reasoning'] = 'none', parallel = false, tools_ = tools): Frame {
  return toolCallsStart({
    parser: format,
    grammar: toolGrammarOf(format),
    tools: tools_,
    choice: only === undefined ? 'required' : { name: only },
    parallel,
    reasoning,
    reasoningExits: QWEN3_THINK.exits,
    specialTexts: specialTexts(vocab),
  });
}

interface Walk {
  text: string;
  ended: boolean;
}

/**
 * A seeded random walk over the allowed tokens: uniform, except that an allowed "bait" token (one
 * that spells part of a marker or of the call syntax) is taken a third of the time, and the end
 * token a quarter of the time where it is allowed (never with `endless`, so free text runs to `maxTokens`).
 */
function walk(grammar: CompiledGrammar, vocab: Vocab, seed: number, maxTokens: number, bait: readonly number[], endless = false): Walk {
  const { endToken } = vocab;
  const matcher = grammar.matcher([endToken], true);
  let state = seed >>> 0 || 1;
  const random = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 2 ** 32) * n);
  };
  const mask = new Uint32Array(grammar.maskWords);
  const has = (t: number): boolean => (mask[t >>> 5]! & (1 << (t & 31))) !== 0;
  const decoder = new TextDecoder();
  const bytes: number[] = [];
  for (let step = 0; step < maxTokens && !matcher.isTerminated(); step++) {
    if (!matcher.fillMask(mask)) throw new Error(`dead end after ${JSON.stringify(decoder.decode(Uint8Array.from(bytes)))}`);
    const canEnd = has(endToken);
    if (endless && canEnd) mask[endToken >>> 5]! &= ~(1 << (endToken & 31));
    const baited = bait.filter(has);
    const roll = random(12);
    const token = !endless && canEnd && roll < 3 ? endToken : baited.length > 0 && roll >= 8 ? baited[random(baited.length)]! : nthAllowed(mask, random(countAllowed(mask)));
    if (!matcher.acceptToken(token)) throw new Error(`token ${token} was in the mask but rejected`);
    if (token === endToken) break;
    bytes.push(...tokenText(vocab, token));
  }
  return { text: decoder.decode(Uint8Array.from(bytes)), ended: matcher.isTerminated() };
}

function tokenText(vocab: Vocab, token: number): Uint8Array {
  const bytes = vocab.vocabulary.tokenBytes[token] ?? vocab.specialText.get(token);
  if (bytes) return bytes;
  throw new Error(`token ${token} has no text`);
}

const popcount = (w: number): number => {
  let n = 0;
  for (let x = w >>> 0; x !== 0; x &= x - 1) n++;
  return n;
};
const countAllowed = (mask: Uint32Array): number => mask.reduce((sum, w) => sum + popcount(w), 0);
/** The k-th token (from 0) whose bit is set. */
function nthAllowed(mask: Uint32Array, k: number): number {
  let left = k;
  for (let w = 0; w < mask.length; w++) {
    const n = popcount(mask[w]!);
    if (left >= n) {
      left -= n;
      continue;
    }
    for (let b = 0; b < 32; b++) if (mask[w]! & (1 << b) && left-- === 0) return (w << 5) + b;
  }
  throw new Error('no such token');
}

function baitOf(vocab: Vocab): number[] {
  const { vocabulary } = vocab;
  const bait = new Set<number>(vocab.specialText.keys());
  const encoder = new TextEncoder();
  const wanted = new Set(PIECES.map((p) => encoder.encode(p).join(',')));
  vocabulary.tokenBytes.forEach((b, id) => {
    if (b !== null && wanted.has(b.join(','))) bait.add(id);
  });
  return [...bait];
}

function callGrammar(vocab: Vocab, format: Format, only: string | undefined, reasoning: 'none' | 'optional' = 'none', parallel = false): CompiledGrammar {
  return grammarOf(vocab, forced(vocab, format, only, reasoning, parallel));
}

function parse(format: Format, text: string, reasoning: boolean) {
  const tool = createToolParser(format, { tools });
  return createParserChain({ tool, reasoning: reasoning ? createReasoningParser('qwen3', { startsInReasoning: false }) : null }).parse(text);
}

function expectValidCall(format: Format, text: string, reasoning: boolean, only?: string): void {
  const result = parse(format, text, reasoning);
  if (result.toolCalls.length !== 1) throw new Error(`${format}: ${JSON.stringify(text)} gave ${result.toolCalls.length} calls (${result.warnings.join('; ')})`);
  const [call] = result.toolCalls;
  if (only !== undefined) expect(call!.name).toBe(only);
  const validate = validators.get(call!.name);
  if (!validate) throw new Error(`${format}: ${JSON.stringify(text)} calls an undeclared tool ${call!.name}`);
  if (!validate(call!.arguments)) throw new Error(`${format}: ${JSON.stringify(text)} -> ${JSON.stringify(call!.arguments)}: ${ajv.errorsText(validate.errors)}`);
  expect(result.warnings, text).toEqual([]);
}

const cases: { format: Format; vocab: keyof typeof vocabularies }[] = [
  { format: 'mistral', vocab: 'specials' },
  { format: 'mistral', vocab: 'mistralV3' },
  { format: 'mistral', vocab: 'plain' },
  { format: 'pythonic', vocab: 'specials' },
  { format: 'pythonic', vocab: 'plain' },
  { format: 'deepseek_v3', vocab: 'specials' },
  { format: 'deepseek_v3', vocab: 'plain' },
];

describe('tool call grammars: mistral, pythonic, deepseek_v3', () => {
  for (const { format, vocab: name } of cases) {
    const vocab = vocabularies[name];
    const bait = baitOf(vocab);

    it(`${format} (${name} vocabulary): "required" 150 walks (a third with optional reasoning) all parse into one valid call`, () => {
      const plain = callGrammar(vocab, format, undefined);
      const thinking = callGrammar(vocab, format, undefined, 'optional');
      const names = new Set<string>();
      let ended = 0;
      for (let seed = 1; seed <= 150; seed++) {
        const reasoning = seed % 3 === 0;
        const { text, ended: done } = walk(reasoning ? thinking : plain, vocab, seed, 300, bait);
        if (!done) continue;
        ended++;
        expectValidCall(format, text, reasoning);
        names.add(parse(format, text, reasoning).toolCalls[0]!.name);
      }
      expect(ended).toBeGreaterThan(140);
      expect([...names].sort()).toEqual([...TOOL_NAMES].sort());
    });

    it(`${format} (${name} vocabulary): a named tool, 50 walks each, always calls that tool`, () => {
      for (const only of TOOL_NAMES) {
        const grammar = callGrammar(vocab, format, only);
        for (let seed = 1; seed <= 50; seed++) {
          const { text, ended } = walk(grammar, vocab, seed, 300, bait);
          if (ended) expectValidCall(format, text, false, only);
        }
      }
    });

    it(`${format} (${name} vocabulary): "none", 100 walks drawn to the markers, never yields a call (without the grammar they do)`, () => {
      const nones = [grammarOf(vocab, noCallStart(toolGrammarOf(format), 'none')), grammarOf(vocab, noCallStart(toolGrammarOf(format), 'optional'))];
      const free = grammarOf(vocab, new FreeText().start());
      let freeCalls = 0;
      for (let seed = 1; seed <= 100; seed++) {
        const reasoning = seed % 2 === 0;
        const { text } = walk(nones[reasoning ? 1 : 0]!, vocab, seed, 40, bait, true);
        const result = parse(format, text, reasoning);
        if (result.toolCalls.length > 0) throw new Error(`${format} none: ${JSON.stringify(text)} parsed as a call`);
        expect(startsCall(format, text), text).toBe(false);
        // The same walk without a grammar (every token allowed, special ones too) does start calls.
        const unguided = walk(free, vocab, seed, 40, bait, true).text;
        if (startsCall(format, unguided)) freeCalls++;
      }
      expect(freeCalls).toBeGreaterThan(5);
    });

    it(`${format} (${name} vocabulary): the mask is exactly the set of tokens a matcher accepts`, () => {
      for (const [only, seed] of [[undefined, 7], ['take_note', 8]] as const) {
        const grammar = callGrammar(vocab, format, only, 'optional');
        const path = walkTokens(grammar, vocab, seed, 60, bait);
        const matcher = grammar.matcher([vocab.endToken], true);
        const probe = grammar.matcher([vocab.endToken], true);
        const mask = new Uint32Array(grammar.maskWords);
        for (const token of path) {
          matcher.fillMask(mask);
          for (let t = 0; t < vocab.vocabulary.size; t++) {
            const accepted = probe.acceptToken(t);
            if (accepted) probe.rollback(1);
            if (accepted !== ((mask[t >>> 5]! & (1 << (t & 31))) !== 0)) throw new Error(`token ${t}: accepted ${accepted}, mask says otherwise`);
          }
          expect(matcher.acceptToken(token)).toBe(true);
          expect(probe.acceptToken(token)).toBe(true);
        }
      }
    });
  }

  it('a marker is taken as its special token or as its text; free text takes a special token as its text, so none writes a marker', () => {
    const vocab = vocabularies.specials;
    const { vocabulary, endToken } = vocab;
    const id = (text: string): number => [...vocab.specialText].find(([, bytes]) => new TextDecoder().decode(bytes) === text)![0];
    const bytesOf = (text: string) => Array.from(new TextEncoder().encode(text));
    // mistral v11 (the vocabulary has [ARGS]): the call opens with [TOOL_CALLS], the token or its text.
    const grammar = callGrammar(vocab, 'mistral', undefined);
    const mistral = grammar.matcher([endToken], true);
    expect(mistral.acceptToken(id('[TOOL_CALLS]'))).toBe(true);
    for (const b of bytesOf('ping')) expect(mistral.acceptToken(b)).toBe(true);
    expect(mistral.acceptToken(id('[CALL_ID]'))).toBe(false);
    expect(mistral.acceptToken(id('[ARGS]'))).toBe(true);
    expect(mistral.acceptToken(id('[ARGS]'))).toBe(false);
    const asText = grammar.matcher([endToken], true);
    expect(bytesOf('[TOOL_CALLS]ping[ARGS]{}').every((b) => asText.acceptToken(b))).toBe(true);
    expect(asText.isTerminated()).toBe(true);
    // A reply that drops special tokens' text cannot show the marker: the token is refused there.
    expect(grammar.matcher([endToken], false).allows(id('[TOOL_CALLS]'))).toBe(false);
    // "none": a special token whose text is a marker is refused, another one (its text is free) is not.
    for (const format of FORMATS) {
      const none = grammarOf(vocab, noCallStart(toolGrammarOf(format), 'none'));
      const mask = new Uint32Array(none.maskWords);
      none.matcher([endToken], true).fillMask(mask);
      const allowed = (t: number): boolean => (mask[t >>> 5]! & (1 << (t & 31))) !== 0;
      const markers = format === 'mistral' ? ['[TOOL_CALLS]'] : format === 'deepseek_v3' ? ['<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>'] : ['<|python_start|>'];
      for (const marker of markers) expect(allowed(id(marker)), `${format} ${marker}`).toBe(false);
      expect(allowed(id('<｜tool▁sep｜>')), format).toBe(true);
    }
    // A JSON string takes no special token's text as a character run either way it is written.
    const stringGrammar = grammarOf(vocab, valueStart(compileSchema({ type: 'string', maxLength: 3 }, 's')));
    const inString = stringGrammar.matcher([endToken], true);
    expect(inString.acceptToken(bytesOf('"')[0]!)).toBe(true);
    expect(inString.acceptToken(id('[ARGS]'))).toBe(false); // 6 characters, more than maxLength
    expect(vocabulary.size).toBeGreaterThan(0);
  });

  it('"none" forbids exactly what starts a call', () => {
    const accepts = (format: Format, text: string): boolean => {
      const grammar = grammarOf(vocabularies.plain, noCallStart(toolGrammarOf(format), 'optional'));
      const m = grammar.matcher([]);
      return Array.from(new TextEncoder().encode(text)).every((b) => m.acceptToken(b));
    };
    expect(accepts('mistral', 'a [TOOL_CALLS')).toBe(true);
    expect(accepts('mistral', 'a [TOOL_CALLS]')).toBe(false);
    expect(accepts('deepseek_v3', 'x <｜tool▁call▁begi')).toBe(true);
    expect(accepts('deepseek_v3', 'x <｜tool▁call▁begin｜>')).toBe(false);
    expect(accepts('deepseek_v3', '<｜tool▁calls▁begin｜>')).toBe(false);
    expect(accepts('pythonic', 'see [1] and [f()]')).toBe(true);
    expect(accepts('pythonic', '[')).toBe(false);
    expect(accepts('pythonic', ' \n\t[')).toBe(false);
    expect(accepts('pythonic', '\u00a0\u3000[')).toBe(false); // a reasoning parser trims these too
    expect(accepts('pythonic', 'é[')).toBe(true);
    expect(accepts('pythonic', '<think>[x]</think>ok')).toBe(true);
    expect(accepts('pythonic', '<think>x</think>\n [')).toBe(false);
    expect(accepts('pythonic', 'ok <|python_start|>')).toBe(false);
  });

  it('reasoning before a forced call: a reasoning parser exit is the guided call where the call always satisfies it, else refused', () => {
    const feed = (format: string, exits: typeof QWEN3_THINK.exits, text: string): boolean => {
      const start = toolCallsStart({ parser: format, grammar: toolGrammarOf(format), tools, choice: 'required', parallel: false, reasoning: 'open', reasoningExits: exits });
      const m = grammarOf(vocabularies.plain, start).matcher([]);
      return Array.from(new TextEncoder().encode(text)).every((b) => m.acceptToken(b));
    };
    const r1 = DEEPSEEK_R1_THINK.exits;
    expect(feed('deepseek_v3', r1, 'hmm <｜tool▁calls▁begi')).toBe(true);
    // deepseek_r1 ends reasoning at this tag and reads the rest as content: it is the guided call.
    expect(feed('deepseek_v3', r1, 'hmm <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>ping\n```json\n')).toBe(true);
    expect(feed('deepseek_v3', r1, 'hmm <｜tool▁calls▁begin｜>x')).toBe(false);
    // qwen3's exit <tool_call> (then <function) is no call in these formats: refused in reasoning.
    for (const format of FORMATS) expect(feed(format, QWEN3_THINK.exits, 'hmm <tool_call>'), format).toBe(false);
    expect(feed('deepseek_v3', r1, 'hmm </think>\n<｜tool▁calls▁begin｜>')).toBe(true);
    // Without the rule, this reply would give deepseek_r1 + deepseek_v3 a call with invalid arguments.
    const chain = createParserChain({ reasoning: createReasoningParser('deepseek_r1'), tool: createToolParser('deepseek_v3', { tools }) });
    expect(chain.parse('x<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>calculator\n```json\n{}\n```<｜tool▁call▁end｜>').toolCalls).toHaveLength(1);
  });

  it('refuses tools a format cannot write, naming them', () => {
    const bad = (name: string, parameters?: Record<string, unknown>): ToolDefinition[] => [{ type: 'function', function: { name, ...(parameters && { parameters }) } }];
    const build = (format: string, t: ToolDefinition[], vocab: Vocab = vocabularies.plain): Frame => forced(vocab, format, undefined, 'none', false, t);
    expect(() => build('pythonic', bad('get-weather'))).toThrow(/tools\[0\]\.function\.name.*pythonic/);
    expect(() => build('pythonic', bad('f', { type: 'object', properties: { 'a-b': { type: 'string' } }, required: ['a-b'] }))).toThrow(/"a-b" cannot be a Python keyword/);
    expect(() => build('pythonic', bad('f', { anyOf: [{ type: 'object' }] }))).toThrow(/parameters\.anyOf/);
    expect(() => build('deepseek_v3', bad('a\nb'))).toThrow(/deepseek_v3/);
    expect(() => build('mistral', bad('a b'), vocabularies.specials)).toThrow(/mistral call/);
    // Before v11 the name is a JSON string: anything goes.
    expect(() => build('mistral', bad('a b'))).not.toThrow();
    // An optional parameter that is not a Python name is left out.
    expect(build('pythonic', bad('f', { type: 'object', properties: { 'a-b': { type: 'string' }, c: { type: 'integer' } } }))).toBeDefined();
  });

  for (const { format, vocab: name } of cases) {
    it(`${format} (${name} vocabulary): parallel calls, 60 walks: one or more valid calls, several in some; without, exactly one`, () => {
      const vocab = vocabularies[name];
      const bait = baitOf(vocab);
      const parallel = callGrammar(vocab, format, undefined, 'none', true);
      let several = 0;
      for (let seed = 1; seed <= 60; seed++) {
        const { text, ended } = walk(parallel, vocab, seed, 400, bait);
        if (!ended) continue;
        const result = parse(format, text, false);
        expect(result.warnings, text).toEqual([]);
        expect(result.toolCalls.length, text).toBeGreaterThanOrEqual(1);
        for (const call of result.toolCalls) expect(validators.get(call.name)!(call.arguments), `${text}: ${call.name}`).toBe(true);
        if (result.toolCalls.length > 1) several++;
      }
      expect(several).toBeGreaterThan(3);
      const single = callGrammar(vocab, format, undefined, 'none', false);
      for (let seed = 1; seed <= 30; seed++) {
        const { text, ended } = walk(single, vocab, seed, 400, bait);
        if (ended) expect(parse(format, text, false).toolCalls.length, text).toBe(1);
      }
    });
  }
});

describe('Python literals (the pythonic grammar values)', () => {
  const { vocabulary } = vocabularies.plain;
  const VALUES: [unknown, unknown][] = [
    ['he said "hi" \\ back\\slash', { type: 'string' }],
    ['unicode é 日本 😀 \u2028 tab\t nl\n cr\r nul\0 bell\u0007', { type: 'string' }],
    [{ a: { b: [1, -2.5, 3e40, null, true, false, 'x'] }, 'we"ird\\key': 'v' }, {}],
    [[[], {}, [[0]], ''], { type: 'array' }],
    [null, { type: 'null' }],
    [true, { type: 'boolean' }],
    [{ kind: null }, { enum: [{ kind: null }, [true, 'x']] }],
    [[true, 'x'], { enum: [{ kind: null }, [true, 'x']] }],
    [-0.001, { type: 'number' }],
    [123456789012345, { type: 'integer' }],
  ];

  for (const [value, schema] of VALUES) {
    it(`round-trips ${JSON.stringify(value).slice(0, 40)}: written as the grammar allows, read back by the parser as the same value`, () => {
      const literal = pythonLiteral(value);
      const grammar = new CompiledGrammar(vocabulary, new Stack(valueStart(compileSchema(schema, 's', 'python')), END_STACK));
      const m = grammar.matcher([vocabularies.plain.endToken]);
      for (const b of new TextEncoder().encode(literal)) expect(m.acceptToken(b), literal).toBe(true);
      expect(m.isTerminated() || m.acceptToken(vocabularies.plain.endToken), literal).toBe(true);
      const parsed = parsePythonLiteral(literal);
      expect(parsed).toEqual({ ok: true, value });
      // And inside a call, through the pythonic tool parser.
      const call = createToolParser('pythonic').parse(`[f(v=${literal})]`);
      expect(call.toolCalls[0]!.arguments).toEqual({ v: value });
    });
  }

  it('writes True/False/None, JSON escapes but not \\/ (Python keeps it as two characters)', () => {
    const take = (schema: unknown, text: string): boolean => {
      const grammar = new CompiledGrammar(vocabulary, new Stack(valueStart(compileSchema(schema, 's', 'python')), END_STACK));
      const m = grammar.matcher([vocabularies.plain.endToken]);
      return Array.from(new TextEncoder().encode(text)).every((b) => m.acceptToken(b));
    };
    expect(take({ type: 'boolean' }, 'True')).toBe(true);
    expect(take({ type: 'boolean' }, 'true')).toBe(false);
    expect(take({ type: 'null' }, 'None')).toBe(true);
    expect(take({ type: 'null' }, 'null')).toBe(false);
    expect(take({ type: 'string' }, '"\\u00e9\\ud83d\\ude00\\"\\\\\\n"')).toBe(true);
    expect(parsePythonLiteral('"\\u00e9\\ud83d\\ude00\\"\\\\\\n"')).toEqual({ ok: true, value: 'é😀"\\\n' });
    expect(take({ type: 'string' }, '"a\\/')).toBe(false);
    expect(take({ type: 'string' }, "'a'")).toBe(false);
    expect(take({ type: 'object', additionalProperties: { type: 'boolean' } }, '{"k\\/')).toBe(false);
    expect(take({ type: 'object', additionalProperties: { type: 'boolean' } }, '{"k": True}')).toBe(true);
  });

  it('200 random pythonic calls over a JSON-schema suite all parse and validate', () => {
    const suite: Record<string, unknown> = {
      strings: { type: 'object', properties: { s: { type: 'string', maxLength: 6 }, t: { type: 'string', minLength: 2, maxLength: 3 } }, required: ['s', 't'] },
      nested: {
        type: 'object',
        properties: { points: { type: 'array', maxItems: 3, items: { type: 'object', properties: { x: { type: 'number' }, y: { type: ['integer', 'null'] } }, required: ['x'] } } },
        required: ['points'],
      },
      unions: { type: 'object', properties: { u: { anyOf: [{ type: 'integer' }, { type: 'string', maxLength: 4 }, { type: 'null' }, { type: 'boolean' }] } }, required: ['u'] },
      enums: { type: 'object', properties: { e: { enum: ['a"b', 'c\\d', 1, 1.5, null, true, { k: [false] }] }, c: { const: 'fixed' } }, required: ['e', 'c'] },
      free: { type: 'object', properties: { o: { type: 'object', additionalProperties: { type: 'boolean' } } }, required: ['o'] },
      refs: { $defs: { unit: { enum: ['m', 'km'] } }, type: 'object', properties: { unit: { $ref: '#/$defs/unit' } }, required: ['unit'] },
    };
    const suiteTools: ToolDefinition[] = Object.entries(suite).map(([name, parameters]) => ({ type: 'function', function: { name, parameters: parameters as Record<string, unknown> } }));
    const check = new Map(suiteTools.map((t) => [t.function.name, ajv.compile(t.function.parameters!)]));
    const vocab = vocabularies.plain;
    const bait = baitOf(vocab);
    let ended = 0;
    for (const tool of suiteTools) {
      const grammar = grammarOf(vocab, forced(vocab, 'pythonic', undefined, 'none', false, [tool]));
      for (let seed = 1; seed <= 200 / suiteTools.length + 1; seed++) {
        const { text, ended: done } = walk(grammar, vocab, seed, 300, bait);
        if (!done) continue;
        ended++;
        const result = createToolParser('pythonic', { tools: [tool] }).parse(text);
        expect(result.toolCalls.length, text).toBe(1);
        const validate = check.get(result.toolCalls[0]!.name)!;
        if (!validate(result.toolCalls[0]!.arguments)) throw new Error(`${text}: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(ended).toBeGreaterThan(150);
  });
});

const NO_GUARD = new Uint8Array(256);

/** Every token the vocabulary has (special ones too): what a model writes without a grammar. */
class FreeText {
  start() {
    return new FreeFrame();
  }
}

class FreeFrame extends Frame {
  readonly key = 'free';
  override get canPop(): boolean {
    return true;
  }
  /** Free text with no guard byte: every token, those without bytes too. */
  override get guardBytes(): Uint8Array {
    return NO_GUARD;
  }
  step(): Step {
    return this;
  }
}

/** Whether unconstrained text would have started a call (the marker is there, even if the call is broken). */
function startsCall(format: Format, text: string): boolean {
  if (format === 'mistral') return text.includes('[TOOL_CALLS]');
  if (format === 'deepseek_v3') return text.includes('<｜tool▁calls▁begin｜>') || text.includes('<｜tool▁call▁begin｜>');
  return /^\s*\[/.test(text) || text.includes('<|python_start|>');
}

function walkTokens(grammar: CompiledGrammar, vocab: Vocab, seed: number, maxTokens: number, bait: readonly number[]): number[] {
  const matcher = grammar.matcher([vocab.endToken], true);
  const mask = new Uint32Array(grammar.maskWords);
  const tokens: number[] = [];
  let state = seed;
  for (let i = 0; i < maxTokens && !matcher.isTerminated(); i++) {
    matcher.fillMask(mask);
    const allowed: number[] = [];
    for (let t = 0; t < vocab.vocabulary.size; t++) if (t !== vocab.endToken && mask[t >>> 5]! & (1 << (t & 31))) allowed.push(t);
    if (allowed.length === 0) break;
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const baited = allowed.filter((t) => bait.includes(t));
    const pool = baited.length > 0 && state % 3 === 0 ? baited : allowed;
    const token = pool[state % pool.length]!;
    matcher.acceptToken(token);
    tokens.push(token);
  }
  return tokens;
}
