/**
 * pythonic calls, in the syntax parser.ts reads:
 * `[NAME(KEY=VALUE, ...)]`, keyword arguments in declared order (optional ones
 * may be left out), each value a Python literal (json-schema.ts's python
 * dialect: `True`/`False`/`None`, double-quoted strings with escapes Python
 * and the parser read the same way, lists, dicts) that the parser reads back as
 * a schema-valid JSON value.
 *
 * The list holds every call of the reply (`[a(x=1), b()]`, more than one with
 * parallel calls): the parser takes only a reply whose content starts (after
 * whitespace) with `[` or `<|python_start|>` as calls, and what follows the
 * list as content. So `[` is a call marker only at the start of the content
 * (the tool-guided "auto" trigger, refused there by "none", call-modes.ts),
 * and `<|python_start|>` (not written) is refused anywhere.
 */
import { InvalidOptionError } from '../../errors.js';
import type { ToolDefinition } from '../../text/types.js';
import { DONE } from '../../guided/automaton.js';
import { choice, jsonPart, type Lead } from '../../guided/call-parts.js';
import { compileSchema } from '../../guided/json-schema.js';
import { Sequence, type Choice, type Part } from '../../guided/text-frames.js';
import type { CallGrammar, ToolGrammar } from '../../guided/tool-grammar.js';
import { FUNCTION_NAME, IDENTIFIER, LIST_OPEN, PY_START } from './markers.js';

/** Keywords a parameters schema may have here: the call's arguments are its properties. */
const OBJECT_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', '$defs', 'definitions', 'title', 'description', '$schema', '$id', '$comment', 'default', 'examples']);

export const pythonicGrammar: ToolGrammar = {
  callMarkers: [PY_START],
  /** `[` starts a call only at the start of the content. */
  startMarkers: [LIST_OPEN],
  call: (tools, indices, options) => pythonicCall(tools, indices, options.parallel),
};

function pythonicCall(tools: readonly ToolDefinition[], indices: readonly number[], parallel: boolean): CallGrammar {
  // After a call's `)`: the list's end, or (parallel calls) another call.
  const afterCall: Part = { start: () => listTail.start() };
  const functions = choice(
    indices.map((i) => {
      const name = tools[i]!.function.name;
      if (!FUNCTION_NAME.test(name)) throw new InvalidOptionError(`tools[${i}].function.name`, `${JSON.stringify(name)} cannot be written as a pythonic call (a Python name)`);
      const args = keywordArguments(tools[i]!, i, afterCall);
      return { lead: `${name}(`, next: () => args.start() };
    }),
    'tools',
  );
  const listTail = choice([{ lead: ']', next: () => DONE }, ...(parallel ? [{ lead: ', ', next: () => functions.start() }] : [])], 'tools');
  return { open: LIST_OPEN, rest: { start: () => functions.start() }, triggers: [{ text: LIST_OPEN, at: 'start' }], holdsAllCalls: true };
}

/** The keyword arguments, `)`, then `after`. */
function keywordArguments(tool: ToolDefinition, index: number, after: Part): Part {
  const where = `tools[${index}].function.parameters`;
  const schema = (tool.function.parameters ?? { type: 'object' }) as Record<string, unknown>;
  for (const key of Object.keys(schema)) {
    if (!OBJECT_KEYWORDS.has(key)) throw new InvalidOptionError(`${where}.${key}`, `a pythonic call's arguments are keyword arguments: "${key}" is not supported there`);
  }
  if (schema.type !== undefined && schema.type !== 'object') throw new InvalidOptionError(`${where}.type`, 'the arguments must be an object');
  // The whole schema, so that a property's $ref finds the $defs; without declared properties none is written.
  const object = compileSchema({ ...schema, type: 'object' }, where, 'python').objects[0]!;
  const required = new Set(object.names.filter((_, i) => object.required[i]));
  const kept = object.names.flatMap((name, i) => {
    if (IDENTIFIER.test(name)) return [i];
    if (required.has(name)) throw new InvalidOptionError(`${where}.properties`, `the required "${name}" cannot be a Python keyword argument`);
    return []; // an optional one that cannot be written is left out
  });
  const names = kept.map((i) => object.names[i]!);
  const values = kept.map((i) => jsonPart(object.values[i]!));
  const from = new Map<string, Choice>();
  // The choice once the parameters before i are given or skipped (`first`: none given yet).
  const choiceFrom = (i: number, first: boolean): Choice => {
    const known = from.get(`${i}.${first}`);
    if (known !== undefined) return known;
    const options: Lead[] = [];
    for (let j = i; j < names.length; j++) {
      const body = new Sequence([values[j]!, { start: () => choiceFrom(j + 1, false).start() }]);
      options.push({ lead: `${first ? '' : ', '}${names[j]}=`, next: () => body.start() });
      if (required.has(names[j]!)) break;
    }
    if (names.slice(i).every((name) => !required.has(name))) options.push({ lead: ')', next: () => after.start() });
    const made = choice(options, where);
    from.set(`${i}.${first}`, made);
    return made;
  };
  // Built now, so a bad schema is refused before the request runs.
  for (let i = names.length; i >= 0; i--) {
    choiceFrom(i, true);
    choiceFrom(i, false);
  }
  return { start: () => choiceFrom(0, true).start() };
}
