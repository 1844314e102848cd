/**
 * Tool-call grammars in each tool parser's own syntax: one call (arguments
 * valid against the tool's schema), how the parser recognises its start
 * (triggers), and the markers toolChoice "none" must never write.
 * call-modes.ts builds what a request runs from them: forced calls
 * ("required", a named tool), tool-guided "auto", parallel calls, reasoning.
 */
import { InvalidOptionError } from '../errors.js';
import type { ToolDefinition } from '../text/types.js';
import { DONE, Frame, POP_REPROCESS, utf8, type Step } from './automaton.js';
import { valueStart } from './json-frames.js';
import { compileSchema, type ValueSpec } from './json-schema.js';
import { Choice, Sequence, literalPart, newId, type Part } from './text-frames.js';

/** The tool parsers that have grammars; the others refuse toolChoice "required", a named tool and "none". */
export const GUIDED_TOOL_PARSERS = ['qwen3coder', 'hermes', 'llama3_json'] as const;

/** What toolChoice "none" forbids, per parser: every text that would start a call. */
const CALL_MARKERS: Record<(typeof GUIDED_TOOL_PARSERS)[number], readonly string[]> = {
  qwen3coder: ['<tool_call>', '<function='],
  hermes: ['<tool_call>'],
  // Any object may be a llama3_json call, so "none" writes no `{` at all.
  llama3_json: ['{', '<|python_tag|>'],
};

export function isGuidedToolParser(name: string): name is (typeof GUIDED_TOOL_PARSERS)[number] {
  return (GUIDED_TOOL_PARSERS as readonly string[]).includes(name);
}

export function callMarkers(parser: string): readonly string[] {
  if (!isGuidedToolParser(parser)) throw new InvalidOptionError('toolChoice', `the ${parser} tool parser has no guided grammar yet (guided: ${GUIDED_TOOL_PARSERS.join(', ')})`);
  return CALL_MARKERS[parser];
}

/** One call in a format's syntax, restricted to some tools. */
export interface CallGrammar {
  /** The literal that opens a call (a choice lead next to `<think>`). */
  readonly open: string;
  /** Everything after it, up to the end of the call. */
  readonly rest: Part;
  /**
   * Tool-guided "auto": the texts at which the parser starts reading a call. Default: each of the
   * parser's call markers (CALL_MARKERS) that `open` starts with, anywhere in the text, followed
   * by the rest of `open` and `rest`. A call marker that is not a trigger is refused in free text.
   */
  readonly triggers?: readonly CallTrigger[];
  /** Between parallel calls of a forced reply: up to `max` characters of `allowed`. Default: up to 2 newlines. */
  readonly separator?: { readonly allowed: string; readonly max: number };
}

export interface CallTrigger {
  readonly text: string;
  /** 'anywhere' (default), or 'start': only at the start of the reply's content, after whitespace (as pythonic reads `[`). */
  readonly at?: 'anywhere' | 'start';
  /** What follows the trigger, up to the end of the call. Default: the rest of `open` (which must start with `text`), then `rest`. */
  readonly then?: Part;
}

const jsonPart = (spec: ValueSpec): Part => ({ start: () => valueStart(spec) });

function argumentsSpec(tool: ToolDefinition, index: number): ValueSpec {
  return compileSchema(tool.function.parameters ?? { type: 'object' }, `tools[${index}].function.parameters`);
}

function choice(options: { lead: string; next: () => Frame | typeof DONE }[], where: string): Choice {
  try {
    return new Choice(options.map((o) => ({ lead: utf8(o.lead), next: o.next })));
  } catch (error) {
    throw new InvalidOptionError(where, (error as Error).message);
  }
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
  if (hermes) return { open: '<tool_call>\n', rest };
  // llama3_json: a call starts at any `{`, or at <|python_tag|> (then its object); `;` or whitespace between calls.
  return {
    open: '{',
    rest,
    triggers: [{ text: '{' }, { text: '<|python_tag|>', then: new Sequence([literalPart('{'), rest]) }],
    separator: { allowed: '; \n', max: 2 },
  };
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
    const options: { lead: string; next: () => Frame | typeof DONE }[] = [];
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
 * A raw qwen3coder string value up to its closing tag: valid UTF-8 without `<`
 * (so it can hold no tag), ending with the newline the parser strips; the
 * length bounds count characters before that newline.
 */
class RawText {
  readonly id = newId();
  readonly bounded: boolean;
  private readonly frames = new Map<string, RawTextFrame>();
  constructor(
    readonly minLength: number,
    readonly maxLength: number,
  ) {
    this.bounded = minLength > 0 || maxLength !== Infinity;
  }
  start(): Frame {
    return this.frame(0, false, 0);
  }
  /** Unbounded values do not count their length, so they have few states. */
  frame(length: number, afterNewline: boolean, utf8: number): RawTextFrame {
    const key = `${this.bounded ? length : 0}.${afterNewline ? 1 : 0}.${utf8}`;
    let frame = this.frames.get(key);
    if (frame === undefined) {
      frame = new RawTextFrame(this, this.bounded ? length : 0, afterNewline, utf8);
      this.frames.set(key, frame);
    }
    return frame;
  }
}

/** UTF-8 inside a character: [lowest, highest] allowed next byte and the state after it (as json-frames.ts checks strings). */
const UTF8_NEXT: readonly (readonly [number, number, number])[] = [
  [0, 0, 0],
  [0x80, 0xbf, 0],
  [0x80, 0xbf, 1],
  [0x80, 0xbf, 2],
  [0xa0, 0xbf, 1], // after E0: no overlong forms
  [0x80, 0x9f, 1], // after ED: no surrogates
  [0x90, 0xbf, 2], // after F0: no overlong forms
  [0x80, 0x8f, 2], // after F4: nothing past U+10FFFF
];

/** The UTF-8 state after a lead byte, or -1 if it cannot start a character. */
function utf8Lead(byte: number): number {
  if (byte < 0x80) return 0;
  if (byte >= 0xc2 && byte <= 0xdf) return 1;
  if (byte === 0xe0) return 4;
  if (byte === 0xed) return 5;
  if (byte >= 0xe1 && byte <= 0xef) return 2;
  if (byte === 0xf0) return 6;
  if (byte === 0xf4) return 7;
  if (byte >= 0xf1 && byte <= 0xf3) return 3;
  return -1;
}

class RawTextFrame extends Frame {
  readonly key: string;
  constructor(
    readonly raw: RawText,
    readonly length: number,
    readonly afterNewline: boolean,
    /** 0 between characters, else the UTF8_NEXT entry of the character being read. */
    readonly utf8: number,
  ) {
    super();
    this.key = `R${raw.id}.${length}.${afterNewline ? 1 : 0}.${utf8}`;
  }
  step(byte: number): Step {
    const { raw, length } = this;
    if (this.utf8 !== 0) {
      const [lo, hi, after] = UTF8_NEXT[this.utf8]!;
      return byte >= lo && byte <= hi ? raw.frame(length, false, after) : null;
    }
    // `length` counts the final newline too (unbounded values do not count at all).
    if (byte === 0x3c) return this.afterNewline && (!raw.bounded || length - 1 >= raw.minLength) ? POP_REPROCESS : null;
    if (byte < 0x20 && byte !== 0x0a && byte !== 0x09) return null;
    const utf8 = utf8Lead(byte);
    if (utf8 === -1) return null;
    const newline = byte === 0x0a;
    if (raw.bounded && length >= raw.maxLength && !newline) return null;
    if (raw.bounded && length > raw.maxLength) return null;
    return raw.frame(length + 1, newline, utf8);
  }
}

/** The grammar of one call to one of `tools[indices]` in the parser's syntax. */
export function callGrammar(parser: string, tools: readonly ToolDefinition[], indices: readonly number[]): CallGrammar {
  if (!isGuidedToolParser(parser)) callMarkers(parser);
  return parser === 'qwen3coder' ? qwen3coderCall(tools, indices) : jsonCall(tools, indices, parser === 'hermes');
}
