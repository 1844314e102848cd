/**
 * deepseek_v3 calls, in the syntax src/parsers/tools/deepseek-v3.ts reads (DeepSeek V3's template):
 * `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`.
 * Each `<｜…｜>` marker is written as the special token where the vocabulary has
 * one with that text, as text otherwise (an ordinary added token, or pieces).
 * V3.1's spelling (no `function`, no code fence) is read by the
 * parser but not written.
 */
import { InvalidOptionError } from '../../errors.js';
import type { ToolDefinition } from '../../text/types.js';
import type { CallGrammar } from '../tool-formats.js';
import { Sequence } from '../text-frames.js';
import { argumentsSpec, choice, jsonPart, marker, spell, symbolsPart, type SpecialTokens } from './parts.js';

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

/** The parser starts a call at either (a call outside the block is read too). */
export const DEEPSEEK_V3_MARKERS: readonly string[] = [CALLS_BEGIN, CALL_BEGIN];

export function deepseekV3Call(tools: readonly ToolDefinition[], indices: readonly number[], specials: SpecialTokens): CallGrammar {
  const header = spell(marker(CALL_BEGIN, specials), 'function', marker(SEP, specials));
  const close = symbolsPart(spell('\n```', marker(CALL_END, specials), marker(CALLS_END, specials)));
  const names = choice(
    indices.map((i) => {
      const name = tools[i]!.function.name;
      // The parser reads the name up to a newline, backtick, `{` or `<`, and trims it.
      if (name === '' || /[\n`{<]/.test(name) || name.trim() !== name) {
        throw new InvalidOptionError(`tools[${i}].function.name`, `${JSON.stringify(name)} cannot be written as a deepseek_v3 call`);
      }
      const body = new Sequence([jsonPart(argumentsSpec(tools[i]!, i)), close]);
      return { lead: spell(header, `${name}\n\`\`\`json\n`), next: () => body.start() };
    }),
    'tools',
  );
  return { open: CALLS_BEGIN, rest: { start: () => names.start() } };
}
