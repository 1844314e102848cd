/**
 * mistral calls, in the syntax parser.ts reads, chosen by the
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
import { argumentsSpec, choice, jsonPart, nameAndArguments } from '../../guided/call-parts.js';
import { literalPart, Sequence } from '../../guided/text-frames.js';
import type { CallGrammar, ToolGrammar } from '../../guided/tool-grammar.js';
import { ARGS, NAME, TOOL_CALLS } from './markers.js';

export const mistralGrammar: ToolGrammar = {
  /** Any `[TOOL_CALLS]` starts a call. */
  callMarkers: [TOOL_CALLS],
  call: (tools, indices, options) => mistralCall(tools, indices, options.specialTexts.has(ARGS)),
};

/** `v11`: the vocabulary has `[ARGS]` as a special token. */
function mistralCall(tools: readonly ToolDefinition[], indices: readonly number[], v11: boolean): CallGrammar {
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
  return { open: TOOL_CALLS, rest: new Sequence([literalPart('[{"name": "'), nameAndArguments(tools, indices, 'arguments', '}]')]) };
}
