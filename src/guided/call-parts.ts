/**
 * What every tool format's grammar is built from: choices between leads (tool
 * names, parameter keys), JSON values of a tool's schema, and the
 * `"name": ..., "arguments": ...` object several formats share. Markers are
 * text: a special token is taken wherever the grammar takes its text (grammar.ts).
 */
import { InvalidOptionError } from '../errors.js';
import type { ToolDefinition } from '../text/types.js';
import { DONE, utf8, type Frame } from './automaton.js';
import { valueStart } from './json-frames.js';
import { compileSchema, type ValueSpec } from './json-schema.js';
import { Choice, Sequence, literalPart, type Part } from './text-frames.js';

export interface Lead {
  readonly lead: string;
  readonly next: () => Frame | typeof DONE;
}

/** A Choice between leads (none a prefix of another); `where` names the option when they are not. */
export function choice(options: readonly Lead[], where: string): Choice {
  try {
    return new Choice(options.map((o) => ({ lead: utf8(o.lead), next: o.next })));
  } catch (error) {
    throw new InvalidOptionError(where, (error as Error).message);
  }
}

export const jsonPart = (spec: ValueSpec): Part => ({ start: () => valueStart(spec) });

/** A tool's arguments as one JSON value (formats that write them as a JSON object). */
export function argumentsSpec(tool: ToolDefinition, index: number): ValueSpec {
  return compileSchema(tool.function.parameters ?? { type: 'object' }, `tools[${index}].function.parameters`);
}

/**
 * The rest of a `{"name": "NAME", "KEY": ARGS}` call once its `"name": "` is written: one of the
 * tools' names, `", "KEY": `, the arguments, then `close` (the object's `}` and what follows it).
 */
export function nameAndArguments(tools: readonly ToolDefinition[], indices: readonly number[], argumentsKey: string, close: string): Part {
  const names = choice(
    indices.map((i) => {
      const tool = tools[i]!;
      const body = new Sequence([jsonPart(argumentsSpec(tool, i)), literalPart(close)]);
      return { lead: `${JSON.stringify(tool.function.name).slice(1)}, "${argumentsKey}": `, next: () => body.start() };
    }),
    'tools',
  );
  return { start: () => names.start() };
}
