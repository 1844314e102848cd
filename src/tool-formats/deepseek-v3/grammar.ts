/**
 * deepseek_v3 calls, in the syntax parser.ts reads (DeepSeek V3's template):
 * `<｜tool▁calls▁begin｜>` then per call
 * `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>`,
 * then `<｜tool▁calls▁end｜>`: one block holds every call of the reply (more than
 * one with parallel calls). The markers are text here; the model may write them as
 * special tokens, whose text the reply keeps with a tool parser (grammar.ts).
 * V3.1's spelling (no `function`, no code fence) is read by the parser but not written.
 */
import { InvalidOptionError } from '../../errors.js';
import type { ToolDefinition } from '../../text/types.js';
import { DONE } from '../../guided/automaton.js';
import { argumentsSpec, choice, jsonPart, type Lead } from '../../guided/call-parts.js';
import { Sequence, literalPart } from '../../guided/text-frames.js';
import type { CallGrammar, ToolGrammar } from '../../guided/tool-grammar.js';
import { CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, FENCE, SEP } from './markers.js';

export const deepseekV3Grammar: ToolGrammar = {
  /**
   * The parser starts a call at either (a call outside the block is read too). Only the block's
   * start is a trigger; a lone `<｜tool▁call▁begin｜>` is refused in free text (call-modes.ts).
   */
  callMarkers: [CALLS_BEGIN, CALL_BEGIN],
  call: (tools, indices, options) => deepseekV3Call(tools, indices, options.parallel),
};

function deepseekV3Call(tools: readonly ToolDefinition[], indices: readonly number[], parallel: boolean): CallGrammar {
  const callLeads: Lead[] = indices.map((i) => {
    const name = tools[i]!.function.name;
    // The parser reads the name up to a newline, backtick, `{` or `<`, and trims it.
    if (name === '' || /[\n`{<]/.test(name) || name.trim() !== name) {
      throw new InvalidOptionError(`tools[${i}].function.name`, `${JSON.stringify(name)} cannot be written as a deepseek_v3 call`);
    }
    const body = new Sequence([jsonPart(argumentsSpec(tools[i]!, i)), literalPart(`\n${FENCE}${CALL_END}`), { start: () => afterCall.start() }]);
    return { lead: `${CALL_BEGIN}function${SEP}${name}\n${FENCE}json\n`, next: () => body.start() };
  });
  const calls = choice(callLeads, 'tools');
  // After a call: the block's end, or (parallel calls) another call.
  const afterCall = choice([...(parallel ? callLeads : []), { lead: CALLS_END, next: () => DONE }], 'tools');
  return { open: CALLS_BEGIN, rest: { start: () => calls.start() }, holdsAllCalls: true };
}
