/**
 * pythonic calls, in the syntax src/parsers/tools/pythonic.ts reads:
 * `[NAME(KEY=VALUE, ...)]`, keyword arguments in declared order (optional ones
 * may be left out), each value a Python literal (json-schema.ts's python
 * dialect: `True`/`False`/`None`, double-quoted strings with escapes Python
 * and the parser read the same way, lists, dicts) that the parser reads back as
 * a schema-valid JSON value.
 *
 * The parser takes only a reply whose content starts (after whitespace) with
 * `[` or `<|python_start|>` as calls, so "none" forbids exactly that: a `[`
 * first, at the start or after a `</think>` (where a reasoning parser starts
 * the content), and `<|python_start|>` anywhere.
 */
import { InvalidOptionError } from '../../errors.js';
import type { ToolDefinition } from '../../text/types.js';
import { DONE, Frame, type Step } from '../automaton.js';
import { compileSchema } from '../json-schema.js';
import type { CallGrammar } from '../tool-formats.js';
import { Sequence, newId, type Choice, type Part } from '../text-frames.js';
import { choice, jsonPart, type Lead } from './parts.js';

const PY_START = '<|python_start|>';
const THINK_END = '</think>';
/** The parser's function names, and its keyword names. */
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Keywords a parameters schema may have here: the call's arguments are its properties. */
const OBJECT_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', '$defs', 'definitions', 'title', 'description', '$schema', '$id', '$comment', 'default', 'examples']);

export const PYTHONIC_MARKERS: readonly string[] = [PY_START];

export function pythonicCall(tools: readonly ToolDefinition[], indices: readonly number[]): CallGrammar {
  const functions = choice(
    indices.map((i) => {
      const name = tools[i]!.function.name;
      if (!FUNCTION_NAME.test(name)) throw new InvalidOptionError(`tools[${i}].function.name`, `${JSON.stringify(name)} cannot be written as a pythonic call (a Python name)`);
      const args = keywordArguments(tools[i]!, i);
      return { lead: `${name}(`, next: () => args.start() };
    }),
    'tools',
  );
  return { open: '[', rest: { start: () => functions.start() } };
}

/** The keyword arguments and `)]`. */
function keywordArguments(tool: ToolDefinition, index: number): Part {
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
    if (names.slice(i).every((name) => !required.has(name))) options.push({ lead: ')]', next: () => DONE });
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

/**
 * Text that the pythonic parser never reads as calls (toolChoice "none"): no
 * `[` while only whitespace came since the start or the last `</think>`, and no
 * `<|python_start|>`. Whitespace is JavaScript's `\s`, which a reasoning parser
 * trims from the content's start (more than the tool parser skips). A state is
 * that flag, the bytes of a character not complete yet while it holds, and the
 * longest suffix of the text that begins one of the two (ASCII) markers.
 */
export class PythonicNoCall implements Part {
  readonly id = newId();
  private readonly frames = new Map<string, NoCallFrame>();
  private readonly markers = [PY_START, THINK_END];
  start(): Frame {
    return this.frame(true, '', '');
  }
  frame(atStart: boolean, pending: string, suffix: string): NoCallFrame {
    const key = `${atStart ? 1 : 0}.${pending}.${suffix}`;
    let frame = this.frames.get(key);
    if (frame === undefined) this.frames.set(key, (frame = new NoCallFrame(this, key, atStart, pending, suffix)));
    return frame;
  }
  /** The state after `byte`, or null where the text would start a call. */
  next(from: NoCallFrame, byte: number): NoCallFrame | null {
    let atStart = false;
    let pending = '';
    if (from.atStart) {
      if (from.pending === '' && byte === 0x5b) return null;
      const bytes = from.pending + String.fromCharCode(byte);
      const length = utf8Length(bytes.charCodeAt(0));
      const continuation = byte >= 0x80 && byte <= 0xbf;
      // Broken UTF-8 before the first character: refused rather than guessed at.
      if (length === 0 || (bytes.length > 1 && !continuation)) return null;
      if (bytes.length < length) {
        atStart = true;
        pending = bytes;
      } else {
        atStart = /^\s$/.test(new TextDecoder().decode(Uint8Array.from(bytes, (c) => c.charCodeAt(0))));
      }
    }
    const text = from.suffix + String.fromCharCode(byte);
    if (text.endsWith(PY_START)) return null;
    if (text.endsWith(THINK_END)) return this.frame(true, '', '');
    for (let k = 0; k < text.length; k++) {
      const tail = text.slice(k);
      if (this.markers.some((m) => m.startsWith(tail))) return this.frame(atStart, pending, tail);
    }
    return this.frame(atStart, pending, '');
  }
}

/** Bytes of the UTF-8 character that `lead` starts (0: not a lead byte). */
function utf8Length(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

class NoCallFrame extends Frame {
  readonly key: string;
  private readonly transitions = new Map<number, NoCallFrame | null>();
  constructor(
    readonly text: PythonicNoCall,
    state: string,
    readonly atStart: boolean,
    readonly pending: string,
    readonly suffix: string,
  ) {
    super();
    this.key = `P${text.id}.${state}`;
  }
  override get canPop(): boolean {
    return true;
  }
  step(byte: number): Step {
    let next = this.transitions.get(byte);
    if (next === undefined) {
      next = this.text.next(this, byte);
      this.transitions.set(byte, next);
    }
    return next;
  }
}
