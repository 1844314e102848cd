/**
 * qwen3coder calls, in the syntax parser.ts reads: `<tool_call>\n<function=NAME>\n`
 * then `<parameter=KEY>\nVALUE\n</parameter>\n` per parameter, in declared order
 * (optional ones may be left out), then `</function>\n</tool_call>`. A value is
 * raw text when the parameter may be a string (the parser reads it as one), else JSON.
 */
import type { ToolDefinition } from '../../text/types.js';
import { DONE } from '../../guided/automaton.js';
import { choice, jsonPart, type Lead } from '../../guided/call-parts.js';
import { InvalidOptionError } from '../../errors.js';
import { compileSchema } from '../../guided/json-schema.js';
import { RawText } from '../../guided/raw-text.js';
import { Sequence, literalPart, type Choice, type Part } from '../../guided/text-frames.js';
import type { CallGrammar, ToolGrammar } from '../../guided/tool-grammar.js';
import { FUNCTION, FUNCTION_END, NAME_END, PARAMETER, PARAMETER_END, TOOL_CALL, TOOL_CALL_END } from './markers.js';

export const qwen3coderGrammar: ToolGrammar = {
  callMarkers: [TOOL_CALL, FUNCTION],
  call: (tools, indices) => qwen3coderCall(tools, indices),
};

function qwen3coderCall(tools: readonly ToolDefinition[], indices: readonly number[]): CallGrammar {
  const functions = choice(
    indices.map((i) => {
      const params = parameters(tools[i]!, i);
      return { lead: `${tools[i]!.function.name}${NAME_END}\n`, next: () => params.start() };
    }),
    'tools',
  );
  return { open: `${TOOL_CALL}\n`, rest: new Sequence([literalPart(FUNCTION), { start: () => functions.start() }]) };
}

function parameters(tool: ToolDefinition, index: number): Part {
  const schema = tool.function.parameters ?? { type: 'object' };
  const where = `tools[${index}].function.parameters`;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const names = Object.keys(properties);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const values = names.map((name) => parameterValue(properties[name], `${where}.properties.${name}`));
  const from: (Choice | undefined)[] = [];
  // from[i]: the choices once parameters before i are given or skipped.
  const choiceFrom = (i: number): Choice => {
    const known = from[i];
    if (known !== undefined) return known;
    const options: Lead[] = [];
    for (let j = i; j < names.length; j++) {
      const body = new Sequence([values[j]!, literalPart(`${PARAMETER_END}\n`), { start: () => choiceFrom(j + 1).start() }]);
      options.push({ lead: `${PARAMETER}${names[j]}${NAME_END}\n`, next: () => body.start() });
      if (required.has(names[j]!)) break;
    }
    if (names.slice(i).every((name) => !required.has(name))) options.push({ lead: `${FUNCTION_END}\n${TOOL_CALL_END}`, next: () => DONE });
    const made = choice(options, where);
    from[i] = made;
    return made;
  };
  // Built now, so a bad name is refused before the request runs.
  for (let i = names.length; i >= 0; i--) choiceFrom(i);
  return { start: () => choiceFrom(0).start() };
}

/** One parameter value, then its newline. */
function parameterValue(schema: unknown, where: string): Part {
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
    const { minLength, maxLength, patterns } = spec.strings[0]!;
    // Raw text (not JSON) has no automaton for patterns yet: refused rather than weakened.
    if (patterns.length > 0) throw new InvalidOptionError(where, 'the qwen3coder grammar writes string parameters as raw text and does not support "pattern" or "format" on them');
    const raw = new RawText(minLength, maxLength);
    return { start: () => raw.start() };
  }
  return new Sequence([jsonPart(spec), literalPart('\n')]);
}
