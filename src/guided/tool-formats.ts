/**
 * Tool-call grammars in each tool parser's own syntax: the call a request
 * with toolChoice "required" or a named tool must make (arguments valid
 * against the tool's schema), and the markers toolChoice "none" must never
 * write. Optional reasoning (`<think>...</think>`) may come first when a
 * reasoning parser reads the reply.
 */
import { InvalidOptionError } from '../errors.js';
import type { ToolDefinition } from '../text/types.js';
import { DONE, Frame, POP_REPROCESS, type Step } from './automaton.js';
import { compileSchema } from './json-schema.js';
import { DEEPSEEK_R1_THINK, QWEN3_THINK } from '../parsers/reasoning/think.js';
import { AvoidText, Optional, Sequence, literalPart, newId, type Choice, type Part } from './text-frames.js';
import { DEEPSEEK_V3_MARKERS, deepseekV3Call } from './formats/deepseek-v3.js';
import { MISTRAL_MARKERS, mistralCall } from './formats/mistral.js';
import { argumentsSpec, choice, jsonPart, marker, NO_SPECIAL_TOKENS, symbolsPart, type Lead, type SpecialTokens } from './formats/parts.js';
import { PYTHONIC_MARKERS, PythonicNoCall, pythonicCall } from './formats/pythonic.js';

/** The tool parsers that have grammars (every built-in one); others refuse toolChoice "required", a named tool and "none". */
export const GUIDED_TOOL_PARSERS = ['qwen3coder', 'hermes', 'llama3_json', 'mistral', 'pythonic', 'deepseek_v3'] as const;

/** What toolChoice "none" forbids, per parser: every text that would start a call (special tokens are never written outside a call). */
const CALL_MARKERS: Record<(typeof GUIDED_TOOL_PARSERS)[number], readonly string[]> = {
  qwen3coder: ['<tool_call>', '<function='],
  hermes: ['<tool_call>'],
  // Any object may be a llama3_json call, so "none" writes no `{` at all.
  llama3_json: ['{', '<|python_tag|>'],
  mistral: MISTRAL_MARKERS,
  // And a `[` first: noCallText.
  pythonic: PYTHONIC_MARKERS,
  deepseek_v3: DEEPSEEK_V3_MARKERS,
};

export function isGuidedToolParser(name: string): name is (typeof GUIDED_TOOL_PARSERS)[number] {
  return (GUIDED_TOOL_PARSERS as readonly string[]).includes(name);
}

export function callMarkers(parser: string): readonly string[] {
  if (!isGuidedToolParser(parser)) throw new InvalidOptionError('toolChoice', `the ${parser} tool parser has no guided grammar yet (guided: ${GUIDED_TOOL_PARSERS.join(', ')})`);
  return CALL_MARKERS[parser];
}

/** The tags at which the reasoning parsers end a think block and pass the rest on as content (a call). */
const REASONING_EXITS = [...QWEN3_THINK.exits, ...DEEPSEEK_R1_THINK.exits].map((exit) => exit.tag);

/** The text toolChoice "none" allows: none of the parser's markers (and for pythonic no `[` first). */
export function noCallText(parser: string): Part {
  const markers = callMarkers(parser);
  return parser === 'pythonic' ? new PythonicNoCall() : new AvoidText(markers);
}

export interface CallGrammar {
  /** The marker that opens a call (a choice lead next to `<think>`): the special token with that text where the vocabulary has one. */
  readonly open: string;
  /** Everything after it. */
  readonly rest: Part;
}

/** `<tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>` (hermes) or `{"name": "NAME", "parameters": ARGS}` (llama3_json). */
function jsonCall(tools: readonly ToolDefinition[], indices: readonly number[], hermes: boolean): CallGrammar {
  const names = choice(
    indices.map((i) => {
      const tool = tools[i]!;
      const body = new Sequence([jsonPart(argumentsSpec(tool, i)), literalPart(hermes ? '}\n</tool_call>' : '}')]);
      return { lead: `${JSON.stringify(tool.function.name).slice(1)}, "${hermes ? 'arguments' : 'parameters'}": `, next: () => body.start() };
    }),
    'tools',
  );
  const rest = new Sequence([literalPart(hermes ? '{"name": "' : '"name": "'), { start: () => names.start() }]);
  return { open: hermes ? '<tool_call>\n' : '{', rest };
}

/**
 * qwen3coder: `<tool_call>\n<function=NAME>\n` then `<parameter=KEY>\nVALUE\n</parameter>\n` per
 * parameter, in declared order (optional ones may be left out), then `</function>\n</tool_call>`.
 * A value is raw text when the parameter may be a string (the parser reads it as one), else JSON.
 */
function qwen3coderCall(tools: readonly ToolDefinition[], indices: readonly number[]): CallGrammar {
  const functions = choice(
    indices.map((i) => {
      const params = qwenParameters(tools[i]!, i);
      return { lead: `${tools[i]!.function.name}>\n`, next: () => params.start() };
    }),
    'tools',
  );
  return { open: '<tool_call>\n', rest: new Sequence([literalPart('<function='), { start: () => functions.start() }]) };
}

function qwenParameters(tool: ToolDefinition, index: number): Part {
  const schema = tool.function.parameters ?? { type: 'object' };
  const where = `tools[${index}].function.parameters`;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const names = Object.keys(properties);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const values = names.map((name) => qwenValue(properties[name], `${where}.properties.${name}`));
  const from: (Choice | undefined)[] = [];
  // from[i]: the choices once parameters before i are given or skipped.
  const choiceFrom = (i: number): Choice => {
    const known = from[i];
    if (known !== undefined) return known;
    const options: Lead[] = [];
    for (let j = i; j < names.length; j++) {
      const body = new Sequence([values[j]!, literalPart('</parameter>\n'), { start: () => choiceFrom(j + 1).start() }]);
      options.push({ lead: `<parameter=${names[j]}>\n`, next: () => body.start() });
      if (required.has(names[j]!)) break;
    }
    if (names.slice(i).every((name) => !required.has(name))) options.push({ lead: '</function>\n</tool_call>', next: () => DONE });
    const made = choice(options, where);
    from[i] = made;
    return made;
  };
  // Built now, so a bad name is refused before the request runs.
  for (let i = names.length; i >= 0; i--) choiceFrom(i);
  return { start: () => choiceFrom(0).start() };
}

/** One parameter value, then its newline. */
function qwenValue(schema: unknown, where: string): Part {
  const spec = compileSchema(schema ?? {}, where);
  if (spec.literals !== undefined) {
    // Strings are written raw (no quotes); other enum values as JSON.
    const texts = spec.literals.map((bytes) => {
      const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
      return `${typeof value === 'string' ? value : JSON.stringify(value)}\n`;
    });
    const options = choice([...new Set(texts)].map((lead) => ({ lead, next: () => DONE })), where);
    return { start: () => options.start() };
  }
  if (spec.strings.length > 0) {
    const { minLength, maxLength } = spec.strings[0]!;
    const raw = new RawText(minLength, maxLength);
    return { start: () => raw.start() };
  }
  return new Sequence([jsonPart(spec), literalPart('\n')]);
}

/**
 * A raw qwen3coder string value up to its closing tag: any text without `<`
 * (so it can hold no tag), ending with the newline the parser strips; the
 * length bounds count characters before that newline.
 */
class RawText {
  readonly id = newId();
  constructor(
    readonly minLength: number,
    readonly maxLength: number,
  ) {}
  start(): Frame {
    return new RawTextFrame(this, 0, false);
  }
}

class RawTextFrame extends Frame {
  readonly key: string;
  constructor(
    readonly raw: RawText,
    readonly length: number,
    readonly afterNewline: boolean,
  ) {
    super();
    const bounded = raw.minLength > 0 || raw.maxLength !== Infinity;
    this.key = `R${raw.id}.${bounded ? length : 0}.${afterNewline ? 1 : 0}`;
  }
  step(byte: number): Step {
    const { raw, length } = this;
    const bounded = raw.minLength > 0 || raw.maxLength !== Infinity;
    // `length` counts the final newline too (unbounded values do not count at all).
    if (byte === 0x3c) return this.afterNewline && (!bounded || length - 1 >= raw.minLength) ? POP_REPROCESS : null;
    if (byte < 0x20 && byte !== 0x0a && byte !== 0x09) return null;
    const newline = byte === 0x0a;
    if (bounded) {
      // Continuation bytes are part of the character before them.
      const starts = (byte & 0xc0) !== 0x80;
      if (starts && length >= raw.maxLength && !newline) return null;
      if (starts && length > raw.maxLength) return null;
      return new RawTextFrame(raw, starts ? length + 1 : length, newline);
    }
    return newline === this.afterNewline ? this : new RawTextFrame(raw, 0, newline);
  }
}

/** The call grammar of `parser` over the tools at `indices`. */
function callGrammar(parser: (typeof GUIDED_TOOL_PARSERS)[number], tools: readonly ToolDefinition[], indices: readonly number[], specials: SpecialTokens): CallGrammar {
  switch (parser) {
    case 'qwen3coder':
      return qwen3coderCall(tools, indices);
    case 'hermes':
    case 'llama3_json':
      return jsonCall(tools, indices, parser === 'hermes');
    case 'mistral':
      return mistralCall(tools, indices, specials);
    case 'pythonic':
      return pythonicCall(tools, indices);
    case 'deepseek_v3':
      return deepseekV3Call(tools, indices, specials);
  }
}

/** The frame a required (or named) call starts from; `specials`: the vocabulary's special tokens, which formats' markers may be. */
export function requiredCallGrammar(
  parser: string,
  tools: readonly ToolDefinition[],
  only: string | undefined,
  reasoning: 'none' | 'optional' | 'open',
  specials: SpecialTokens = NO_SPECIAL_TOKENS,
): Frame {
  if (!isGuidedToolParser(parser)) callMarkers(parser);
  const indices = tools.map((_, i) => i).filter((i) => only === undefined || tools[i]!.function.name === only);
  if (indices.length === 0) throw new InvalidOptionError('toolChoice', only === undefined ? 'no tools to call' : `no tool is named "${only}"`);
  const call = callGrammar(parser as (typeof GUIDED_TOOL_PARSERS)[number], tools, indices, specials);
  const open = marker(call.open, specials);
  const fullCall = new Sequence([symbolsPart(open), call.rest]);
  // Reasoning must not hold a tag at which a reasoning parser ends the block early (its text would be read as a call).
  const afterThink = new Sequence([new AvoidText(REASONING_EXITS, '</think>'), new Optional('\n', 2), fullCall]);
  if (reasoning === 'open') return afterThink.start();
  if (reasoning === 'none') return fullCall.start();
  return choice(
    [
      { lead: '<think>', next: () => afterThink.start() },
      { lead: open, next: () => call.rest.start() },
    ],
    'toolChoice',
  ).start();
}
