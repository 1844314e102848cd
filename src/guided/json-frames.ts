/**
 * Frames that read one JSON value of a ValueSpec (json-schema.ts), compact,
 * with at most one space after `:` and `,`. Strings are checked as UTF-8
 * (a lead byte must get its continuation bytes) and as JSON (escapes, no raw
 * control characters).
 */
import { DONE, Frame, POP_REPROCESS, Push, type Step } from './automaton.js';
import type { FreeRun, TokenClass } from './free-runs.js';
import type { ArraySpec, ObjectSpec, StringSpec, ValueSpec } from './json-schema.js';

const QUOTE = 0x22, BACKSLASH = 0x5c, SPACE = 0x20, COMMA = 0x2c, COLON = 0x3a;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
/**
 * Digits allowed before and after the point, and in the exponent: bounded so the state space is,
 * and so that every number is finite as a double (at most about 1e115; 1e999 would be Infinity).
 */
const MAX_DIGITS = 15, MAX_EXP_DIGITS = 2;

export class ValueStart extends Frame {
  readonly key: string;
  constructor(readonly spec: ValueSpec) {
    super();
    this.key = `J${spec.id}`;
  }
  step(byte: number): Step {
    const spec = this.spec;
    if (spec.literals !== undefined) return new LiteralFrame(spec, 0, spec.literals.map((_, i) => i)).step(byte);
    if (byte === 0x7b && spec.objects.length > 0) return new ObjectFrame(spec.objects[0]!, 'open', '', -1);
    if (byte === 0x5b && spec.arrays.length > 0) return new ArrayFrame(spec.arrays[0]!, 'open', 0);
    if (byte === QUOTE && spec.strings.length > 0) return stringStart(spec.strings[0]!);
    if (spec.number !== undefined && (byte === 0x2d || isDigit(byte))) return numberFrame(spec.number === 'integer', 'start', 0).step(byte);
    if (spec.boolean && (byte === 0x74 || byte === 0x66)) return BOOLEAN.step(byte);
    if (spec.null && byte === 0x6e) return NULL.step(byte);
    return null;
  }
}

/** Values cached per spec, so repeated values of one schema share frames. */
const starts = new WeakMap<ValueSpec, ValueStart>();
export function valueStart(spec: ValueSpec): ValueStart {
  let frame = starts.get(spec);
  if (frame === undefined) {
    frame = new ValueStart(spec);
    starts.set(spec, frame);
  }
  return frame;
}

/** A fixed set of texts (enum, const, true/false, null); one may be a prefix of another ("1", "12"). */
class LiteralFrame extends Frame {
  readonly key: string;
  constructor(
    readonly spec: { readonly id: number; readonly literals?: readonly Uint8Array[] },
    readonly pos: number,
    readonly alive: readonly number[],
  ) {
    super();
    this.key = `L${spec.id}.${pos}.${alive.join(',')}`;
  }
  override get canPop(): boolean {
    return this.alive.some((i) => this.spec.literals![i]!.length === this.pos);
  }
  step(byte: number): Step {
    const literals = this.spec.literals!;
    const alive = this.alive.filter((i) => literals[i]![this.pos] === byte);
    if (alive.length === 0) return this.canPop ? POP_REPROCESS : null;
    if (alive.every((i) => literals[i]!.length === this.pos + 1)) return DONE;
    return new LiteralFrame(this.spec, this.pos + 1, alive);
  }
}

const BOOLEAN = new LiteralFrame({ id: 0, literals: [new TextEncoder().encode('true'), new TextEncoder().encode('false')] }, 0, [0, 1]);
const NULL = new LiteralFrame({ id: -1, literals: [new TextEncoder().encode('null')] }, 0, [0]);

type StringPhase = 'content' | 'escape' | 'hex1' | 'hex2' | 'hex3' | 'hex4' | 'cont1' | 'cont2' | 'cont3' | SecondByte;
/** After a lead byte whose next byte has a narrower range (no overlong forms, surrogates or code points past U+10FFFF). */
type SecondByte = 'e0' | 'ed' | 'f0' | 'f4';
const SECOND_BYTE: Record<SecondByte, [number, number, StringPhase]> = {
  e0: [0xa0, 0xbf, 'cont1'],
  ed: [0x80, 0x9f, 'cont1'],
  f0: [0x90, 0xbf, 'cont2'],
  f4: [0x80, 0x8f, 'cont2'],
};

/** String content after the opening quote. `length` counts characters only when the spec bounds it. */
class StringFrame extends Frame {
  readonly key: string;
  constructor(
    readonly spec: StringSpec,
    readonly phase: StringPhase,
    readonly length: number,
  ) {
    super();
    this.key = `s${spec.id}.${phase}.${length}`;
  }
  /** In content, every token of whole characters (escapes included) stays in this string: see JSON_STRING_TOKENS. */
  override freeRun(): FreeRun | undefined {
    return this.phase === 'content' ? { tokens: JSON_STRING_TOKENS, budget: this.spec.maxLength - this.length } : undefined;
  }
  step(byte: number): Step {
    const { spec, phase } = this;
    switch (phase) {
      case 'content':
        if (byte === QUOTE) return this.length >= spec.minLength ? DONE : null;
        if (this.length >= spec.maxLength) return null;
        if (byte === BACKSLASH) return string(spec, 'escape', this.length);
        if (byte < 0x20 || byte === 0x7f) return null;
        if (byte < 0x80) return counted(this);
        if (byte >= 0xc2 && byte <= 0xdf) return string(spec, 'cont1', this.length);
        if (byte === 0xe0 || byte === 0xed) return string(spec, byte === 0xe0 ? 'e0' : 'ed', this.length);
        if (byte >= 0xe1 && byte <= 0xef) return string(spec, 'cont2', this.length);
        if (byte === 0xf0 || byte === 0xf4) return string(spec, byte === 0xf0 ? 'f0' : 'f4', this.length);
        if (byte >= 0xf1 && byte <= 0xf3) return string(spec, 'cont3', this.length);
        return null;
      case 'escape':
        if (byte === 0x75) return string(spec, 'hex1', this.length);
        return '"\\/bfnrt'.includes(String.fromCharCode(byte)) ? counted(this) : null;
      case 'hex1':
      case 'hex2':
      case 'hex3':
      case 'hex4':
        if (!(isDigit(byte) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46))) return null;
        return phase === 'hex4' ? counted(this) : string(spec, `hex${Number(phase[3]) + 1}` as StringPhase, this.length);
      case 'e0':
      case 'ed':
      case 'f0':
      case 'f4': {
        const [low, high, then] = SECOND_BYTE[phase];
        return byte >= low && byte <= high ? string(spec, then, this.length) : null;
      }
      default: {
        if (byte < 0x80 || byte > 0xbf) return null;
        const left = Number(phase[4]) - 1;
        return left === 0 ? counted(this) : string(spec, `cont${left}` as StringPhase, this.length);
      }
    }
  }
}

const bounded = (spec: StringSpec): boolean => spec.minLength > 0 || spec.maxLength !== Infinity;
const plainFrames = new WeakMap<StringSpec, Map<StringPhase, StringFrame>>();
/** Frames of an unbounded string never change with the text, so each phase has one frame. */
function string(spec: StringSpec, phase: StringPhase, length: number): StringFrame {
  if (bounded(spec)) return new StringFrame(spec, phase, length);
  let frames = plainFrames.get(spec);
  if (frames === undefined) plainFrames.set(spec, (frames = new Map()));
  let frame = frames.get(phase);
  if (frame === undefined) frames.set(phase, (frame = new StringFrame(spec, phase, 0)));
  return frame;
}
/** Back to content after one more character. */
function counted(frame: StringFrame): StringFrame {
  return string(frame.spec, 'content', bounded(frame.spec) ? frame.length + 1 : 0);
}
export const stringStart = (spec: StringSpec): StringFrame => string(spec, 'content', 0);

const ANY_STRING: StringSpec = { id: -2, minLength: 0, maxLength: Infinity };
/**
 * Tokens that are whole string characters (plain, UTF-8, escapes), as many units as characters:
 * decided by the string frame itself, so the class cannot drift from what the frame accepts.
 * A bounded frame with `length` characters accepts such a token iff length + units <= maxLength.
 */
const JSON_STRING_TOKENS: TokenClass = {
  key: 'json-string',
  units(bytes) {
    let frame = stringStart(ANY_STRING);
    let characters = 0;
    for (let i = 0; i < bytes.length; i++) {
      const next = frame.step(bytes[i]!);
      if (!(next instanceof StringFrame)) return -1;
      if (next.phase === 'content') characters++;
      frame = next;
    }
    return frame.phase === 'content' ? characters : -1;
  },
};

type NumberPhase = 'start' | 'minus' | 'zero' | 'int' | 'dot' | 'frac' | 'e' | 'esign' | 'exp';

class NumberFrame extends Frame {
  readonly key: string;
  constructor(
    readonly integer: boolean,
    readonly phase: NumberPhase,
    readonly digits: number,
  ) {
    super();
    this.key = `N${integer ? 'i' : 'n'}.${phase}.${digits}`;
  }
  override get canPop(): boolean {
    return this.phase === 'zero' || this.phase === 'int' || this.phase === 'frac' || this.phase === 'exp';
  }
  step(byte: number): Step {
    const { integer, phase, digits } = this;
    const digit = isDigit(byte);
    const to = (p: NumberPhase, d: number): NumberFrame => numberFrame(integer, p, d);
    switch (phase) {
      case 'start':
        if (byte === 0x2d) return to('minus', 0);
        return byte === 0x30 ? to('zero', 1) : digit ? to('int', 1) : null;
      case 'minus':
        return byte === 0x30 ? to('zero', 1) : digit ? to('int', 1) : null;
      case 'zero':
      case 'int':
        if (digit && phase === 'int' && digits < MAX_DIGITS) return to('int', digits + 1);
        if (!integer && byte === 0x2e) return to('dot', 0);
        if (!integer && (byte === 0x65 || byte === 0x45)) return to('e', 0);
        return digit ? null : POP_REPROCESS;
      case 'dot':
        return digit ? to('frac', 1) : null;
      case 'frac':
        if (digit) return digits < MAX_DIGITS ? to('frac', digits + 1) : null;
        if (byte === 0x65 || byte === 0x45) return to('e', 0);
        return POP_REPROCESS;
      case 'e':
        if (byte === 0x2b || byte === 0x2d) return to('esign', 0);
        return digit ? to('exp', 1) : null;
      case 'esign':
        return digit ? to('exp', 1) : null;
      case 'exp':
        if (digit) return digits < MAX_EXP_DIGITS ? to('exp', digits + 1) : null;
        return POP_REPROCESS;
    }
  }
}

const NUMBER_PHASES: readonly NumberPhase[] = ['start', 'minus', 'zero', 'int', 'dot', 'frac', 'e', 'esign', 'exp'];
/** Number states are few (kind x phase x digit count), so each has one frame: a mask walk over digit tokens allocates nothing. */
const numberFrames: NumberFrame[] = [];
function numberFrame(integer: boolean, phase: NumberPhase, digits: number): NumberFrame {
  const index = ((integer ? 1 : 0) * NUMBER_PHASES.length + NUMBER_PHASES.indexOf(phase)) * (MAX_DIGITS + 1) + digits;
  return (numberFrames[index] ??= new NumberFrame(integer, phase, digits));
}

type ObjectPhase = 'open' | 'afterKey' | 'colon' | 'colonSpace' | 'afterValue' | 'comma' | 'commaSpace';

/**
 * An object after `{`. `emitted` marks declared properties already given
 * ('1' per property, in declaration order); `property` is the key just read
 * (-1: a free key).
 */
class ObjectFrame extends Frame {
  readonly key: string;
  constructor(
    readonly spec: ObjectSpec,
    readonly phase: ObjectPhase,
    readonly emitted: string,
    readonly property: number,
  ) {
    super();
    this.key = `O${spec.id}.${phase}.${emitted}.${property}`;
  }
  private get requiredMet(): boolean {
    return this.spec.required.every((required, i) => !required || this.emitted[i] === '1');
  }
  private get keyRemains(): boolean {
    return this.spec.additional !== null || this.spec.names.some((_, i) => this.emitted[i] !== '1');
  }
  step(byte: number): Step {
    const { spec, phase } = this;
    switch (phase) {
      case 'open':
        if (byte === 0x7d) return this.requiredMet ? DONE : null;
        return byte === QUOTE && this.keyRemains ? this.readKey() : null;
      case 'comma':
        if (byte === SPACE) return new ObjectFrame(spec, 'commaSpace', this.emitted, -1);
        return byte === QUOTE ? this.readKey() : null;
      case 'commaSpace':
        return byte === QUOTE ? this.readKey() : null;
      case 'afterKey':
        return byte === COLON ? new ObjectFrame(spec, 'colon', this.emitted, this.property) : null;
      case 'colon':
        if (byte === SPACE) return new ObjectFrame(spec, 'colonSpace', this.emitted, this.property);
        return this.readValue();
      case 'colonSpace':
        return this.readValue();
      case 'afterValue':
        if (byte === 0x7d) return this.requiredMet ? DONE : null;
        return byte === COMMA && this.keyRemains ? new ObjectFrame(spec, 'comma', this.emitted, -1) : null;
    }
  }
  private readKey(): Step {
    const { spec } = this;
    if (spec.additional !== null) return new Push(stringStart(FREE_KEY), new ObjectFrame(spec, 'afterKey', this.emitted, -1), false);
    return new KeyFrame(this, 0, spec.names.map((_, i) => i).filter((i) => this.emitted[i] !== '1'));
  }
  private readValue(): Step {
    const { spec, property } = this;
    const value = property < 0 ? spec.additional! : spec.values[property]!;
    const emitted = property < 0 ? this.emitted : mark(this.emitted, property, spec.names.length);
    return new Push(valueStart(value), new ObjectFrame(spec, 'afterValue', emitted, -1), true);
  }
}

const FREE_KEY: StringSpec = { id: 0, minLength: 0, maxLength: Infinity };

function mark(emitted: string, index: number, count: number): string {
  const flags = emitted.padEnd(count, '0').split('');
  flags[index] = '1';
  return flags.join('');
}

/** A declared key after its opening quote: one of the remaining names, closing quote included. */
class KeyFrame extends Frame {
  readonly key: string;
  constructor(
    readonly object: ObjectFrame,
    readonly pos: number,
    readonly alive: readonly number[],
  ) {
    super();
    this.key = `K${object.spec.id}.${object.emitted}.${pos}.${alive.join(',')}`;
  }
  step(byte: number): Step {
    const keys = this.object.spec.keyBytes;
    const alive = this.alive.filter((i) => keys[i]![this.pos] === byte);
    if (alive.length === 0) return null;
    // Keys end with their closing quote, so a complete one is the only one left.
    const done = alive.find((i) => keys[i]!.length === this.pos + 1);
    if (done !== undefined) return new ObjectFrame(this.object.spec, 'afterKey', this.object.emitted, done);
    return new KeyFrame(this.object, this.pos + 1, alive);
  }
}

type ArrayPhase = 'open' | 'afterValue' | 'comma';

/** An array after `[`; `count` is tracked only when the spec bounds it. */
class ArrayFrame extends Frame {
  readonly key: string;
  constructor(
    readonly spec: ArraySpec,
    readonly phase: ArrayPhase,
    readonly count: number,
  ) {
    super();
    this.key = `A${spec.id}.${phase}.${count}`;
  }
  step(byte: number): Step {
    const { spec, phase, count } = this;
    const tracks = spec.minItems > 0 || spec.maxItems !== Infinity;
    const next = tracks ? count + 1 : 0;
    switch (phase) {
      case 'open':
        if (byte === 0x5d) return spec.minItems === 0 ? DONE : null;
        if (spec.maxItems === 0) return null;
        return new Push(valueStart(spec.items), new ArrayFrame(spec, 'afterValue', next), true);
      case 'afterValue':
        if (byte === 0x5d) return !tracks || count >= spec.minItems ? DONE : null;
        return byte === COMMA && (!tracks || count < spec.maxItems) ? new ArrayFrame(spec, 'comma', count) : null;
      case 'comma':
        if (byte === SPACE) return new ArrayFrame(spec, 'comma', count).afterSpace();
        return new Push(valueStart(spec.items), new ArrayFrame(spec, 'afterValue', next), true);
    }
  }
  private afterSpace(): Frame {
    return new ArraySpaceFrame(this.spec, this.count);
  }
}

/** After `, ` in an array: the next value, no more spaces. */
class ArraySpaceFrame extends Frame {
  readonly key: string;
  constructor(
    readonly spec: ArraySpec,
    readonly count: number,
  ) {
    super();
    this.key = `a${spec.id}.${count}`;
  }
  step(): Step {
    const tracks = this.spec.minItems > 0 || this.spec.maxItems !== Infinity;
    return new Push(valueStart(this.spec.items), new ArrayFrame(this.spec, 'afterValue', tracks ? this.count + 1 : 0), true);
  }
}
