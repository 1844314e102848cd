/**
 * mistral calls, in the syntax src/parsers/tools/mistral.ts reads, chosen by the
 * tokenizer as Mistral's own templates do:
 *  - v11 and later (the vocabulary has an `[ARGS]` special token): `[TOOL_CALLS]NAME[ARGS]ARGS`;
 *  - before v11: `[TOOL_CALLS][{"name": "NAME", "arguments": ARGS}]` (one call per array).
 * Each call has its own `[TOOL_CALLS]` (parallel calls repeat it). The markers
 * are text here; the model may write them as the special tokens, whose text
 * the reply keeps with a tool parser (grammar.ts). The parser has no closing
 * tag: the call ends with the arguments' `}` (v11) or the array's `]`.
 */
import { InvalidOptionError } from '../../errors.js';
import type { ToolDefinition } from '../../text/types.js';
import type { CallGrammar } from '../tool-formats.js';
import { Sequence, literalPart } from '../text-frames.js';
import { argumentsSpec, choice, jsonPart } from './parts.js';

const TOOL_CALLS = '[TOOL_CALLS]';
const ARGS = '[ARGS]';
/** What the parser takes as a v11 name (it trims it). */
const NAME = /^[A-Za-z0-9_.-]+$/;

/** Any `[TOOL_CALLS]` starts a call. */
export const MISTRAL_MARKERS: readonly string[] = [TOOL_CALLS];

/** `v11`: the vocabulary has `[ARGS]` as a special token. */
export function mistralCall(tools: readonly ToolDefinition[], indices: readonly number[], v11: boolean): CallGrammar {
  if (v11) {
    const names = choice(
      indices.map((i) => {
        const name = tools[i]!.function.name;
        if (!NAME.test(name)) throw new InvalidOptionError(`tools[${i}].function.name`, `${JSON.stringify(name)} cannot be written as a mistral call (letters, digits, "_", "." and "-" only)`);
        const body = jsonPart(argumentsSpec(tools[i]!, i));
        return { lead: `${name}${ARGS}`, next: () => body.start() };
      }),
      'tools',
    );
    return { open: TOOL_CALLS, rest: { start: () => names.start() } };
  }
  const names = choice(
    indices.map((i) => {
      const body = new Sequence([jsonPart(argumentsSpec(tools[i]!, i)), literalPart('}]')]);
      return { lead: `${JSON.stringify(tools[i]!.function.name).slice(1)}, "arguments": `, next: () => body.start() };
    }),
    'tools',
  );
  return { open: TOOL_CALLS, rest: new Sequence([literalPart('[{"name": "'), { start: () => names.start() }]) };
}
