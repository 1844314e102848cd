/**
 * Tool-guided "auto" and parallel calls at the grammar level, over a synthetic byte-level
 * vocabulary: random walks that write the trigger often; every call the format's own parser
 * reads has a declared name and ajv-valid arguments; free-text masks (built from guard bytes,
 * not a trie walk) equal what a matcher accepts; triggers split across tokens; reasoning exits.
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { END_STACK, Stack } from '../../src/guided/automaton.js';
import { toolCallsStart, type ToolGuidance } from '../../src/guided/call-modes.js';
import { CompiledGrammar, type GrammarMatcher } from '../../src/guided/grammar.js';
import { Vocabulary } from '../../src/guided/vocabulary.js';
import { QWEN3_THINK } from '../../src/parsers/reasoning/think.js';
import { createToolParser, toolGrammarOf } from '../../src/tool-formats/registry.js';
import type { ToolDefinition } from '../../src/text/types.js';
import { syntheticVocabulary } from './synthetic-vocabulary.js';

const { vocabulary, endToken } = syntheticVocabulary(4000);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const tools: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      parameters: {
        type: 'object',
        properties: { operation: { type: 'string', enum: ['add', 'multiply'] }, a: { type: 'number' }, b: { type: 'number' } },
        required: ['operation', 'a', 'b'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'tag',
      parameters: { type: 'object', properties: { word: { type: 'string', maxLength: 5 }, flag: { type: 'boolean' } }, required: ['word'] },
    },
  },
];
const ajv = new Ajv({ strict: false });
const validators = new Map(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters!)]));

function grammarOf(guidance: Partial<ToolGuidance> & { parser: string }): CompiledGrammar {
  const start = toolCallsStart({ tools, choice: 'auto', parallel: true, reasoning: 'none', reasoningExits: [], grammar: toolGrammarOf(guidance.parser), ...guidance });
  return new CompiledGrammar(vocabulary, new Stack(start, END_STACK));
}

const tokenOf = (text: string): number => {
  const id = vocabulary.tokenBytes.findIndex((b) => b !== null && decoder.decode(b) === text);
  if (id === -1) throw new Error(`no token ${JSON.stringify(text)}`);
  return id;
};
/** Single-byte tokens: ids 0-255. */
const bytesOf = (text: string): number[] => [...encoder.encode(text)];

function allowedTokens(matcher: GrammarMatcher): number[] {
  const mask = new Uint32Array(matcher.grammar.maskWords);
  matcher.fillMask(mask);
  const allowed: number[] = [];
  for (let t = 0; t < matcher.grammar.vocabulary.size; t++) if (mask[t >>> 5]! & (1 << (t & 31))) allowed.push(t);
  return allowed;
}

/**
 * A seeded walk: in free text it writes one of `triggerTokens` one time in 6 (so calls are
 * frequent), else any allowed token; inside a call it picks uniformly among allowed tokens.
 */
function walk(grammar: CompiledGrammar, triggerTokens: readonly number[], seed: number, maxTokens: number): { text: string; ended: boolean } {
  const matcher = grammar.matcher([endToken]);
  let state = seed >>> 0 || 1;
  const random = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 2 ** 32) * n);
  };
  const bytes: number[] = [];
  for (let step = 0; step < maxTokens && !matcher.isTerminated(); step++) {
    let token: number;
    if (matcher.isFreeText() && random(6) === 0) token = triggerTokens[random(triggerTokens.length)]!;
    else {
      const allowed = allowedTokens(matcher);
      token = allowed.includes(endToken) && random(40) === 0 ? endToken : allowed[random(allowed.length)]!;
    }
    if (!matcher.acceptToken(token)) {
      // A trigger token where a call cannot start here (a refused marker): take an allowed one instead.
      expect(matcher.isFreeText()).toBe(true);
      continue;
    }
    if (token !== endToken) bytes.push(...grammar.vocabulary.tokenBytes[token]!);
  }
  return { text: decoder.decode(Uint8Array.from(bytes)), ended: matcher.isTerminated() };
}

function expectValidCalls(parser: string, text: string, complete: boolean): number {
  const result = createToolParser(parser, { tools }).parse(text);
  const calls = complete ? result.toolCalls : result.toolCalls.slice(0, -1);
  for (const call of calls) {
    const validate = validators.get(call.name);
    if (validate === undefined) throw new Error(`undeclared tool ${call.name} in ${JSON.stringify(text)}`);
    if (!validate(call.arguments)) throw new Error(`${call.name}(${JSON.stringify(call.arguments)}) in ${JSON.stringify(text)}: ${ajv.errorsText(validate.errors)}`);
  }
  return result.toolCalls.length;
}

const TRIGGERS: Record<string, string[]> = {
  qwen3coder: ['<tool_call>', '<', '<function='],
  hermes: ['<tool_call>', '<', '</'],
  llama3_json: ['{"', '{', '}]', '[{'],
};

describe('tool-guided auto grammars', () => {
  for (const parser of ['qwen3coder', 'hermes', 'llama3_json']) {
    it(`${parser}: 150 random walks that write the trigger often: every call parses, is declared and validates`, () => {
      const grammar = grammarOf({ parser });
      const triggers = TRIGGERS[parser]!.map(tokenOf);
      let calls = 0;
      let several = 0;
      for (let seed = 1; seed <= 150; seed++) {
        const { text } = walk(grammar, triggers, seed, 160);
        // A walk cut off by the token budget may end inside a call: that call alone is not checked.
        const n = expectValidCalls(parser, text, false);
        calls += n;
        if (n > 1) several++;
      }
      expect(calls).toBeGreaterThan(100);
      expect(several).toBeGreaterThan(10);
    });

    it(`${parser}: without parallel calls, a walk makes at most one call`, () => {
      const grammar = grammarOf({ parser, parallel: false });
      const triggers = TRIGGERS[parser]!.map(tokenOf);
      for (let seed = 1; seed <= 60; seed++) {
        const { text } = walk(grammar, triggers, seed, 160);
        expect(createToolParser(parser, { tools }).parse(text).toolCalls.length).toBeLessThanOrEqual(1);
      }
    });

    it(`${parser}: "required" with parallel calls makes one or more, all valid`, () => {
      const start = toolCallsStart({ parser, grammar: toolGrammarOf(parser), tools, choice: 'required', parallel: true, reasoning: 'none', reasoningExits: [] });
      const grammar = new CompiledGrammar(vocabulary, new Stack(start, END_STACK));
      let several = 0;
      for (let seed = 1; seed <= 80; seed++) {
        const { text, ended } = walk(grammar, [], seed, 300);
        const n = expectValidCalls(parser, text, ended);
        expect(n).toBeGreaterThanOrEqual(1);
        if (n > 1) several++;
      }
      expect(several).toBeGreaterThan(5);
    });

    it(`${parser}: a named tool with parallel calls: every call is to that tool`, () => {
      const start = toolCallsStart({ parser, grammar: toolGrammarOf(parser), tools, choice: { name: 'tag' }, parallel: true, reasoning: 'none', reasoningExits: [] });
      const grammar = new CompiledGrammar(vocabulary, new Stack(start, END_STACK));
      let calls = 0;
      for (let seed = 1; seed <= 40; seed++) {
        const { text, ended } = walk(grammar, [], seed, 300);
        const result = createToolParser(parser, { tools }).parse(text);
        expect(result.toolCalls.length).toBeGreaterThanOrEqual(1);
        expect(new Set(result.toolCalls.map((c) => c.name))).toEqual(new Set(['tag']));
        calls += expectValidCalls(parser, text, ended);
      }
      expect(calls).toBeGreaterThan(40);
    });
  }

  it('free-text masks equal the tokens a matcher accepts, in every kind of free state', () => {
    const grammar = grammarOf({ parser: 'qwen3coder', reasoning: 'optional', reasoningExits: QWEN3_THINK.exits });
    // States: the start, inside reasoning with a partial `</think>`, content with a partial trigger.
    for (const prefix of ['', '<think>ab</thi', '<think>x</think>\nsay <tool_ca', 'hi <', 'a <function']) {
      const matcher = grammar.matcher([endToken]);
      for (const b of bytesOf(prefix)) expect(matcher.acceptToken(b)).toBe(true);
      expect(matcher.isFreeText()).toBe(true);
      const allowed = new Set(allowedTokens(matcher));
      for (let t = 0; t < vocabulary.size; t++) expect(matcher.allows(t), `${JSON.stringify(prefix)} + token ${t}`).toBe(allowed.has(t));
    }
  });

  it('a trigger split across tokens, or written with the text before it and the call after it in one token, is guided', () => {
    const grammar = grammarOf({ parser: 'hermes' });
    const accepts = (pieces: string[]): boolean => {
      const matcher = grammar.matcher([endToken]);
      return pieces.every((piece) => {
        const ids = vocabulary.tokenBytes.findIndex((b) => b !== null && decoder.decode(b) === piece);
        return ids !== -1 ? matcher.acceptToken(ids) : bytesOf(piece).every((b) => matcher.acceptToken(b));
      });
    };
    expect(accepts(['hello <tool', '_call>', '\n{"name": "tag"'])).toBe(true);
    expect(accepts(['hello <tool', '_call>', '\n{"name": "nope"'])).toBe(false);
    // `>\n` completes the trigger and goes on into the call: checked by the call's grammar.
    expect(accepts(['<tool_call', '>\n', '{"'])).toBe(true);
    expect(accepts(['<tool_call', '>', 'x'])).toBe(false);
    // Text that only looks like the start of a trigger stays free.
    expect(accepts(['<tool_cal', 'x <tool', '_box>'])).toBe(true);
    // After the call, free text again, and another call.
    expect(accepts(['<tool_call>', '\n{"name": "tag", "arguments": {"word": "ab"}}\n</tool_call>', ' and {x} ', '<tool_call>', '\n{"name": "calculator"'])).toBe(true);
  });

  it('qwen3coder refuses a bare <function= outside a call; llama3_json guides every object and <|python_tag|>', () => {
    const qwen = grammarOf({ parser: 'qwen3coder' }).matcher([endToken]);
    expect(bytesOf('see <function').every((b) => qwen.acceptToken(b))).toBe(true);
    expect(qwen.acceptToken(tokenOf('='))).toBe(false);
    const llama = grammarOf({ parser: 'llama3_json' });
    const m = llama.matcher([endToken]);
    expect(bytesOf('ok <|python_tag|>{"name": "tag", "parameters": {"word": "z"}}; {"name": "tag"').every((b) => m.acceptToken(b))).toBe(true);
    const answer = llama.matcher([endToken]);
    expect(bytesOf('{"answer"').every((b) => answer.acceptToken(b))).toBe(false);
  });

  it('inside reasoning: an exit that the trigger always satisfies is a guided call; one it cannot is refused', () => {
    const qwen = grammarOf({ parser: 'qwen3coder', reasoning: 'open', reasoningExits: QWEN3_THINK.exits });
    const a = qwen.matcher([endToken]);
    expect(bytesOf('thinking <tool_call>\n<function=tag>\n').every((b) => a.acceptToken(b))).toBe(true);
    expect(a.isFreeText()).toBe(false);
    const b = qwen.matcher([endToken]);
    expect(bytesOf('thinking <tool_call>\nno').every((x) => b.acceptToken(x))).toBe(false);
    // hermes after <tool_call> writes JSON, which is not the exit's `<function`: the tag is refused in reasoning.
    const hermes = grammarOf({ parser: 'hermes', reasoning: 'open', reasoningExits: QWEN3_THINK.exits }).matcher([endToken]);
    expect(bytesOf('thinking <tool_call').every((x) => hermes.acceptToken(x))).toBe(true);
    expect(hermes.acceptToken(tokenOf('>'))).toBe(false);
    // ... but it is free text, and after </think> it starts a guided call.
    expect(bytesOf('</think>\n<tool_call>\n{"name": "tag"').every((x) => hermes.acceptToken(x))).toBe(true);
    // An unknown reasoning parser: no trigger inside reasoning at all.
    const unknown = grammarOf({ parser: 'qwen3coder', reasoning: 'open', reasoningExits: undefined }).matcher([endToken]);
    expect(bytesOf('thinking <tool_call').every((x) => unknown.acceptToken(x))).toBe(true);
    expect(unknown.acceptToken(tokenOf('>'))).toBe(false);
  });

  it('special tokens: free text takes them as the text the reply shows; a grammar takes one whose text it expects', () => {
    // Two tokens without bytes: one whose text (kept in the reply) is the trigger, one with none.
    const tokens = [...vocabulary.tokenBytes, null, null];
    const withSpecials = new Vocabulary(tokens, tokens.length);
    const tagToken = tokens.length - 2;
    const silent = tokens.length - 1;
    const specialText = new Map([[tagToken, encoder.encode('<tool_call>')]]);
    const auto = new CompiledGrammar(withSpecials, new Stack(toolCallsStart({ parser: 'hermes', grammar: toolGrammarOf('hermes'), tools, choice: 'auto', parallel: true, reasoning: 'none', reasoningExits: [] }), END_STACK), specialText);
    const kept = auto.matcher([endToken], true);
    expect(kept.acceptToken(silent)).toBe(true);
    expect(kept.acceptToken(tagToken)).toBe(true); // the trigger: a guided call follows
    expect(kept.isFreeText()).toBe(false);
    expect(kept.allows(silent)).toBe(false);
    expect(bytesOf('\n{"name": "tag"').every((b) => kept.acceptToken(b))).toBe(true);
    // Skipped special tokens show nothing: free text takes them and stays free.
    const skipped = auto.matcher([endToken], false);
    expect(skipped.acceptToken(tagToken)).toBe(true);
    expect(skipped.isFreeText()).toBe(true);
    expect(allowedTokens(skipped)).toContain(tagToken);
    // A forced call may open with the special token whose text is its opening tag.
    const required = new CompiledGrammar(withSpecials, new Stack(toolCallsStart({ parser: 'hermes', grammar: toolGrammarOf('hermes'), tools, choice: 'required', parallel: false, reasoning: 'none', reasoningExits: [] }), END_STACK), specialText);
    const forced = required.matcher([endToken], true);
    expect(allowedTokens(forced)).toContain(tagToken);
    expect(allowedTokens(forced)).not.toContain(silent);
    expect(forced.acceptToken(tagToken)).toBe(true);
    expect(required.matcher([endToken], false).allows(tagToken)).toBe(false);
  });

  it('the reply may end in free text and in reasoning (auto), but not inside a call', () => {
    const grammar = grammarOf({ parser: 'hermes', reasoning: 'optional', reasoningExits: QWEN3_THINK.exits });
    const m = grammar.matcher([endToken]);
    expect(m.allows(endToken)).toBe(true);
    for (const b of bytesOf('  <think>hm')) m.acceptToken(b);
    expect(m.allows(endToken)).toBe(true);
    for (const b of bytesOf('</think>ok <tool_call>\n{"na')) m.acceptToken(b);
    expect(m.allows(endToken)).toBe(false);
  });
});

describe('tool-guided auto grammars: mistral, pythonic, deepseek_v3 (markers as text)', () => {
  const MARKERS = ['[TOOL_CALLS]', '[ARGS]', '<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>', '<|python_start|>', 'tag(', 'calculator('];
  const formatVocab = syntheticVocabulary(4000, 5, { pieces: MARKERS });
  const tokenIn = (text: string): number => {
    const id = formatVocab.vocabulary.tokenBytes.findIndex((b) => b !== null && decoder.decode(b) === text);
    if (id === -1) throw new Error(`no token ${JSON.stringify(text)}`);
    return id;
  };
  const cases: { parser: string; label: string; triggers: string[]; specialTexts?: Set<string> }[] = [
    { parser: 'mistral', label: 'mistral (v11, [ARGS])', triggers: ['[TOOL_CALLS]'], specialTexts: new Set(['[ARGS]']) },
    { parser: 'mistral', label: 'mistral (array)', triggers: ['[TOOL_CALLS]'] },
    // `[` starts a call only at the start of the content; <|python_start|> is refused.
    { parser: 'pythonic', label: 'pythonic', triggers: ['[', '<|python_start|>'] },
    // A lone <｜tool▁call▁begin｜> is refused outside the block.
    { parser: 'deepseek_v3', label: 'deepseek_v3', triggers: ['<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>'] },
  ];
  const grammarFor = (parser: string, parallel: boolean, specialTexts?: Set<string>): CompiledGrammar =>
    new CompiledGrammar(formatVocab.vocabulary, new Stack(toolCallsStart({ parser, grammar: toolGrammarOf(parser), tools, choice: 'auto', parallel, reasoning: 'none', reasoningExits: [], specialTexts }), END_STACK));
  const endOf = formatVocab.endToken;

  for (const { parser, label, triggers, specialTexts } of cases) {
    it(`${label}: 100 random walks that write the trigger often: every call parses, is declared and validates; several with parallel calls, at most one without`, () => {
      const trigger = triggers.map(tokenIn);
      const parallel = grammarFor(parser, true, specialTexts);
      const single = grammarFor(parser, false, specialTexts);
      let calls = 0;
      let several = 0;
      for (let seed = 1; seed <= 100; seed++) {
        // pythonic's trigger counts only at the start: two walks in three begin with it.
        const first = parser === 'pythonic' && seed % 3 !== 0 ? tokenIn('[') : undefined;
        const { text } = walkIn(parallel, trigger, seed, 200, endOf, first);
        const n = expectValidCalls(parser, text, false);
        calls += n;
        if (n > 1) several++;
        const one = walkIn(single, trigger, seed, 200, endOf, first).text;
        expect(createToolParser(parser, { tools }).parse(one).toolCalls.length, one).toBeLessThanOrEqual(1);
      }
      expect(calls).toBeGreaterThan(30);
      expect(several).toBeGreaterThan(parser === 'mistral' ? 5 : 0);
    });
  }

  it('pythonic: a list is a call only at the start; deepseek_v3: a call outside the block is refused; mistral: [TOOL_CALLS] anywhere', () => {
    const feed = (parser: string, text: string): boolean => {
      const m = grammarFor(parser, true).matcher([endOf]);
      return bytesOf(text).every((b) => m.acceptToken(b));
    };
    expect(feed('pythonic', ' [tag(word="a")] and [1, 2] [x')).toBe(true);
    expect(feed('pythonic', ' [nope(')).toBe(false);
    expect(feed('pythonic', 'x <|python_start|>')).toBe(false);
    expect(feed('deepseek_v3', 'see <｜tool▁call▁begin｜>')).toBe(false);
    expect(feed('deepseek_v3', 'see <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>tag\n```json\n{"word": "a"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> done')).toBe(true);
    expect(feed('mistral', 'ok [TOOL_CALLS][{"name": "tag", "arguments": {"word": "a"}}] then [TOOL_CALLS][{"name": "calculator"')).toBe(true);
    expect(feed('mistral', 'ok [TOOL_CALLS]tag')).toBe(false);
  });
});

/** `walk` over another vocabulary (its own end token). */
function walkIn(grammar: CompiledGrammar, triggerTokens: readonly number[], seed: number, maxTokens: number, end: number, first?: number): { text: string; ended: boolean } {
  const matcher = grammar.matcher([end]);
  let state = seed >>> 0 || 1;
  const random = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 2 ** 32) * n);
  };
  const bytes: number[] = [];
  for (let step = 0; step < maxTokens && !matcher.isTerminated(); step++) {
    let token: number;
    if (step === 0 && first !== undefined) token = first;
    else if (matcher.isFreeText() && random(6) === 0) token = triggerTokens[random(triggerTokens.length)]!;
    else {
      const allowed = allowedTokens(matcher);
      token = allowed.includes(end) && random(40) === 0 ? end : allowed[random(allowed.length)]!;
    }
    if (!matcher.acceptToken(token)) {
      expect(matcher.isFreeText()).toBe(true);
      continue;
    }
    if (token !== end) bytes.push(...grammar.vocabulary.tokenBytes[token]!);
  }
  return { text: decoder.decode(Uint8Array.from(bytes)), ended: matcher.isTerminated() };
}
