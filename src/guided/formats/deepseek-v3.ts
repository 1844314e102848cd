/**
 * deepseek_v3 calls, in the syntax src/parsers/tools/deepseek-v3.ts reads (DeepSeek V3's template):
 * `<｜tool▁calls▁begin｜>` then per call
 * `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>`,
 * then `<｜tool▁calls▁end｜>`: one block holds every call of the reply (more than
 * one with parallel calls). The markers are text here; the model may write them as
 * special tokens, whose text the reply keeps with a tool parser (grammar.ts).
 * V3.1's spelling (no `function`, no code fence) is read by the parser but not written.
 */
import { InvalidOptionError } from '../../errors.js';
import { DONE } from '../automaton.js';
import type { ToolDefinition } from '../../text/types.js';
import type { CallGrammar } from '../tool-formats.js';
import { Sequence, literalPart } from '../text-frames.js';
import { argumentsSpec, choice, jsonPart, type Lead } from './parts.js';

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

/**
 * The parser starts a call at either (a call outside the block is read too). Only the block's
 * start is a trigger; a lone `<｜tool▁call▁begin｜>` is refused in free text (call-modes.ts).
 */
export const DEEPSEEK_V3_MARKERS: readonly string[] = [CALLS_BEGIN, CALL_BEGIN];

export function deepseekV3Call(tools: readonly ToolDefinition[], indices: readonly number[], parallel: boolean): CallGrammar {
  const callLeads: Lead[] = indices.map((i) => {
    const name = tools[i]!.function.name;
    // The parser reads the name up to a newline, backtick, `{` or `<`, and trims it.
    if (name === '' || /[\n`{<]/.test(name) || name.trim() !== name) {
      throw new InvalidOptionError(`tools[${i}].function.name`, `${JSON.stringify(name)} cannot be written as a deepseek_v3 call`);
    }
    const body = new Sequence([jsonPart(argumentsSpec(tools[i]!, i)), literalPart(`\n\`\`\`${CALL_END}`), { start: () => afterCall.start() }]);
    return { lead: `${CALL_BEGIN}function${SEP}${name}\n\`\`\`json\n`, next: () => body.start() };
  });
  const calls = choice(callLeads, 'tools');
  // After a call: the block's end, or (parallel calls) another call.
  const afterCall = choice([...(parallel ? callLeads : []), { lead: CALLS_END, next: () => DONE }], 'tools');
  return { open: CALLS_BEGIN, rest: { start: () => calls.start() }, holdsAllCalls: true };
}
