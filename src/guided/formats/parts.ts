/**
 * What every tool format's grammar is built from: choices between leads (tool
 * names, parameter keys), JSON values of a tool's schema, and markers that are
 * special tokens where the vocabulary has them.
 */
import { InvalidOptionError } from '../../errors.js';
import type { ToolDefinition } from '../../text/types.js';
import { DONE, SPECIAL_BASE, utf8, type Frame } from '../automaton.js';
import { valueStart } from '../json-frames.js';
import { compileSchema, type ValueSpec } from '../json-schema.js';
import { Choice, type Part } from '../text-frames.js';

/** A vocabulary's special tokens by their text (Vocabulary.specialTokens); empty when it has none. */
export type SpecialTokens = ReadonlyMap<string, number>;
export const NO_SPECIAL_TOKENS: SpecialTokens = new Map();

/**
 * The symbols of a format's marker: the special token whose text it is when the
 * vocabulary has one (a model writes `[TOOL_CALLS]` as that one token, and the
 * grammar gives special tokens no bytes), else the text's bytes.
 */
export function marker(text: string, specials: SpecialTokens): readonly number[] {
  const id = specials.get(text);
  return id === undefined ? Array.from(utf8(text)) : [SPECIAL_BASE + id];
}

/** Pieces one after another: a string is text, an array is symbols (from `marker`). */
export function spell(...pieces: (string | readonly number[])[]): number[] {
  return pieces.flatMap((p) => (typeof p === 'string' ? Array.from(utf8(p)) : p));
}

export interface Lead {
  readonly lead: string | readonly number[];
  readonly next: () => Frame | typeof DONE;
}

/** A Choice between leads (none a prefix of another); `where` names the option when they are not. */
export function choice(options: readonly Lead[], where: string): Choice {
  try {
    return new Choice(options.map((o) => ({ lead: typeof o.lead === 'string' ? utf8(o.lead) : o.lead, next: o.next })));
  } catch (error) {
    throw new InvalidOptionError(where, (error as Error).message);
  }
}

/** A fixed run of symbols. */
export function symbolsPart(symbols: readonly number[]): Part {
  const only = new Choice([{ lead: symbols, next: () => DONE }]);
  return { start: () => only.start() };
}

export const jsonPart = (spec: ValueSpec): Part => ({ start: () => valueStart(spec) });

/** A tool's arguments as one JSON value (formats that write them as a JSON object). */
export function argumentsSpec(tool: ToolDefinition, index: number): ValueSpec {
  return compileSchema(tool.function.parameters ?? { type: 'object' }, `tools[${index}].function.parameters`);
}
