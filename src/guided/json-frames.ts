/**
 * Frames that read one JSON value of a ValueSpec (json-schema.ts), compact,
 * with at most one space after `:` and `,`. Strings are checked as UTF-8
 * (a lead byte must get its continuation bytes) and as JSON (escapes, no raw
 * control characters). In the python dialect (json-schema.ts) the words are
 * `True`, `False` and `None`, and `\/` is not an escape.
 */
import { advance, DONE, Frame, POP_REPROCESS, Push, Stack, stackKey, type Step } from './automaton.js';
import type { FreeRun, TokenClass } from './free-runs.js';
import type { ArraySpec, Dialect, NumberSpec, ObjectSpec, StringSpec, ValueSpec } from './json-schema.js';
import { reachable, satisfied, type NumberText } from './number-bounds.js';
import type { Pattern } from './regex.js';

const QUOTE = 0x22, BACKSLASH = 0x5c, SPACE = 0x20, COMMA = 0x2c, COLON = 0x3a;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
/** A hex digit's value, or -1. */
function hexDigit(b: number): number {
  if (isDigit(b)) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  return -1;
}
/** JSON whitespace (flexible mode). */
const isSpace = (b: number): boolean => b === SPACE || b === 0x0a || b === 0x0d || b === 0x09;
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
    if (byte === 0x7b && spec.objects.length > 0) return union(spec.objects.map((o) => new ObjectFrame(o, 'open', '', -1)));
    if (byte === 0x5b && spec.arrays.length > 0) return union(spec.arrays.map((a) => new ArrayFrame(a, 'open', 0)));
    if (byte === QUOTE && spec.strings.length > 0) return union(spec.strings.map(stringStart));
    if (spec.number !== undefined && (byte === 0x2d || isDigit(byte))) {
      return spec.numberBounds !== undefined ? boundedNumberStart(spec.numberBounds).step(byte) : numberFrame(spec.number === 'integer', 'start', 0).step(byte);
    }
    const words = WORDS[spec.dialect];
    if (spec.boolean && (byte === words.trueByte || byte === words.falseByte)) return words.boolean.step(byte);
    if (spec.null && byte === words.nullByte) return words.null.step(byte);
    // enum/const options of an anyOf, for the bytes no other kind starts with.
    if (spec.otherLiterals !== undefined) {
      const alive = spec.otherLiterals.flatMap((text, i) => (text[0] === byte ? [i] : []));
      if (alive.length > 0) return new LiteralFrame({ id: -spec.id, literals: spec.otherLiterals }, 0, alive).step(byte);
    }
    return null;
  }
}

/** Ends an alternative of a UnionFrame: reaching it means that alternative's value is complete. */
class UnionEnd extends Frame {
  readonly key = 'u';
  step(): Step {
    return null;
  }
}
const UNION_END = new Stack(new UnionEnd(), null);

/**
 * anyOf/oneOf options of one kind (several object, array or string schemas), read in parallel
 * after their first byte: each alternative is its own stack, and one that refuses a byte drops
 * out. Values of these kinds end with a closing byte at the same place in every alternative (the
 * JSON text's structure is the same), so the union ends when any alternative does.
 */
class UnionFrame extends Frame {
  private cachedKey: string | undefined;
  constructor(readonly alternatives: readonly Stack[]) {
    super();
  }
  get key(): string {
    return (this.cachedKey ??= `U[${this.alternatives.map(stackKey).join(';')}]`);
  }
  /** When every alternative's top reads the same token class itself, so does the union (a token is taken if any alternative takes it). */
  override freeRun(): FreeRun | undefined {
    let run: FreeRun | undefined;
    for (const alternative of this.alternatives) {
      const r = alternative.frame.freeRun();
      if (r === undefined || (run !== undefined && r.tokens.key !== run.tokens.key)) return undefined;
      run = run === undefined || r.budget > run.budget ? r : run;
    }
    return run;
  }
  step(byte: number): Step {
    const next: Stack[] = [];
    let same = true;
    for (const alternative of this.alternatives) {
      const s = advance(alternative, byte);
      if (s === null) {
        same = false;
        continue;
      }
      if (s === UNION_END) return DONE;
      if (s !== alternative) same = false;
      next.push(s);
    }
    if (same) return this;
    if (next.length === 0) return null;
    return next.length === 1 && next[0]!.next === UNION_END ? next[0]!.frame : new UnionFrame(next);
  }
}

function union(frames: readonly Frame[]): Frame {
  return frames.length === 1 ? frames[0]! : new UnionFrame(frames.map((f) => new Stack(f, UNION_END)));
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

/** The words for booleans and null in each dialect: their frames, and the bytes they start with. */
function words(id: number, t: string, f: string, n: string) {
  const literal = (texts: string[], id: number) => new LiteralFrame({ id, literals: texts.map((w) => new TextEncoder().encode(w)) }, 0, texts.map((_, i) => i));
  return { boolean: literal([t, f], id), null: literal([n], id - 1), trueByte: t.charCodeAt(0), falseByte: f.charCodeAt(0), nullByte: n.charCodeAt(0) };
}
const WORDS: Record<Dialect, ReturnType<typeof words>> = { json: words(0, 'true', 'false', 'null'), python: words(-2, 'True', 'False', 'None') };

/**
 * `\\u` escapes: hex1..hex4 the digits; hexD after a first `d` (a surrogate may follow); hs3/hs4 a
 * high surrogate's last digits, then ls0 (`\\`), ls1 (`u`), lh1..lh4 its low surrogate: the pair is
 * one character, as JSON Schema counts (lone surrogates are not written).
 */
type EscapePhase = 'hexD' | 'hs3' | 'hs4' | 'ls0' | 'ls1' | 'lh1' | 'lh2' | 'lh3' | 'lh4';
type StringPhase = 'content' | 'escape' | 'hex1' | 'hex2' | 'hex3' | 'hex4' | EscapePhase | 'cont1' | 'cont2' | 'cont3' | SecondByte;
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
  /** In content, every token of whole characters (escapes included) stays in this string: see STRING_TOKENS. */
  override freeRun(): FreeRun | undefined {
    return this.phase === 'content' ? { tokens: STRING_TOKENS[this.spec.dialect], budget: this.spec.maxLength - this.length } : undefined;
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
        return (spec.dialect === 'python' ? '"\\bfnrt' : '"\\/bfnrt').includes(String.fromCharCode(byte)) ? counted(this) : null;
      case 'hex1':
      case 'hex2':
      case 'hex3':
      case 'hex4':
      case 'hexD':
      case 'hs3':
      case 'hs4':
      case 'lh1':
      case 'lh2':
      case 'lh3':
      case 'lh4': {
        const digit = hexDigit(byte);
        if (digit < 0) return null;
        switch (phase) {
          case 'hex1':
            return string(spec, digit === 0xd ? 'hexD' : 'hex2', this.length);
          case 'hexD':
            // d8-db: a high surrogate; dc-df: a lone low one, refused.
            if (digit >= 0xc) return null;
            return string(spec, digit >= 0x8 ? 'hs3' : 'hex3', this.length);
          case 'hs3':
            return string(spec, 'hs4', this.length);
          case 'hs4':
            return string(spec, 'ls0', this.length);
          case 'lh1':
            return digit === 0xd ? string(spec, 'lh2', this.length) : null;
          case 'lh2':
            return digit >= 0xc ? string(spec, 'lh3', this.length) : null;
          case 'lh3':
            return string(spec, 'lh4', this.length);
          case 'hex4':
          case 'lh4':
            return counted(this);
          default:
            return string(spec, phase === 'hex2' ? 'hex3' : 'hex4', this.length);
        }
      }
      case 'ls0':
        return byte === BACKSLASH ? string(spec, 'ls1', this.length) : null;
      case 'ls1':
        return byte === 0x75 ? string(spec, 'lh1', this.length) : null;
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
export const stringStart = (spec: StringSpec): Frame => (spec.patterns.length > 0 ? internPattern(new PatternStringFrame(spec, 'content', 0, 0, 0, spec.patterns.map((p) => p.start))) : string(spec, 'content', 0));

type PatternPhase = 'content' | 'escape' | 'hex' | 'utf8' | 'lowSlash' | 'lowU' | 'lowHex';

/**
 * String content checked against `pattern`s (and formats): each character, decoded from its
 * UTF-8 bytes or its escape (a surrogate pair of escapes is one character), advances every
 * pattern's automaton; the closing quote needs all of them to accept. `length` counts code
 * points, as JSON Schema does, and a character is refused when a pattern could no longer match
 * within maxLength. A lone surrogate escape is not written.
 */
class PatternStringFrame extends Frame {
  constructor(
    readonly spec: StringSpec,
    readonly phase: PatternPhase,
    /** hex digits read (hex, lowHex), or UTF-8 continuation bytes still due (utf8). */
    readonly n: number,
    /** The code point's bits so far (hex, lowHex, utf8), or the high surrogate (lowSlash, lowU). */
    readonly value: number,
    readonly length: number,
    readonly states: readonly number[],
    /** utf8: the next byte's range, (high << 8) | low; lowHex: the high surrogate. */
    readonly extra = 0,
  ) {
    super();
  }
  /** Made on demand: a mask walk creates a frame per byte and asks few of them for their key. */
  get key(): string {
    return (this.cachedKey ??= `p${this.spec.id}.${this.phase}.${this.n}.${this.value}.${this.extra}.${this.length}.${this.states.join(',')}`);
  }
  private cachedKey: string | undefined;
  private with(phase: PatternPhase, n: number, value: number, extra = 0): PatternStringFrame {
    return new PatternStringFrame(this.spec, phase, n, value, this.length, this.states, extra);
  }
  /** Content again after code point `cp`, or null if a pattern or maxLength refuses it. */
  private char(cp: number): Frame | null {
    const { spec } = this;
    // Counted only when bounded: an unbounded string's states are then few, and its masks cached.
    const length = bounded(spec) ? this.length + 1 : 0;
    if (length > spec.maxLength) return null;
    const states: number[] = [];
    for (let i = 0; i < spec.patterns.length; i++) {
      const pattern: Pattern = spec.patterns[i]!;
      const next = pattern.step(this.states[i]!, cp);
      if (next < 0 || length + pattern.minRemaining(next) > spec.maxLength) return null;
      states.push(next);
    }
    // Every pattern has matched and nothing is counted: the rest is a plain string (its masks are free runs).
    if (!bounded(spec) && spec.patterns.every((p, i) => p.matched(states[i]!))) return string(spec, 'content', 0);
    return new PatternStringFrame(spec, 'content', 0, 0, length, states);
  }
  /** Whether some character with a code point in [lo, hi] may come next (a byte that starts one is taken only then). */
  private mayTake(lo: number, hi: number): boolean {
    const { spec } = this;
    const length = bounded(spec) ? this.length + 1 : 0;
    if (length > spec.maxLength) return false;
    const budget = spec.maxLength - length;
    return spec.patterns.every((p, i) => p.canStep(this.states[i]!, lo, hi, budget));
  }
  /** The code points a `\\u` escape with `digits` hex digits `value` read so far can still be (high surrogates: the characters they start). */
  private mayEscape(value: number, digits: number): boolean {
    const span = 16 ** (4 - digits);
    const lo = value * span, hi = lo + span - 1;
    if (this.mayTake(lo, Math.min(hi, 0xd7ff)) || (hi >= 0xe000 && this.mayTake(Math.max(lo, 0xe000), hi))) return true;
    const h0 = Math.max(lo, 0xd800), h1 = Math.min(hi, 0xdbff);
    return h0 <= h1 && this.mayTake(0x10000 + (h0 - 0xd800) * 0x400, 0x10000 + (h1 - 0xd800) * 0x400 + 0x3ff);
  }
  /** After a `\\u` escape with high surrogate `high`, its low surrogate's `digits` digits `value`. */
  private mayLow(high: number, value: number, digits: number): boolean {
    const span = 16 ** (4 - digits);
    const lo = Math.max(value * span, 0xdc00), hi = Math.min(value * span + span - 1, 0xdfff);
    const base = 0x10000 + (high - 0xd800) * 0x400;
    return lo <= hi && this.mayTake(base + lo - 0xdc00, base + hi - 0xdc00);
  }
  /** A lead or continuation byte: the state after it if some character it starts may come, else null. */
  private utf8(due: number, bits: number, next: number): Step {
    const shift = 6 * due;
    const lo = bits * 2 ** shift;
    let hi = lo + 2 ** shift - 1;
    let low = lo;
    if (due === 2 && lo < 0x800) low = 0x800;
    if (due === 3 && lo < 0x10000) low = 0x10000;
    hi = Math.min(hi, 0x10ffff);
    if (!this.mayTake(low, hi)) return null;
    return this.with('utf8', due, bits, next);
  }
  /** Steps already taken from this frame, by byte (frames are interned, so a loop returns the same frame: no allocation in mask walks). */
  private readonly memo: (Step | undefined)[] = [];
  step(byte: number): Step {
    const known = this.memo[byte];
    if (known !== undefined) return known;
    let r = this.compute(byte);
    if (r instanceof PatternStringFrame) r = internPattern(r);
    this.memo[byte] = r;
    return r;
  }
  private compute(byte: number): Step {
    const { spec, phase } = this;
    switch (phase) {
      case 'content':
        if (byte === QUOTE) return this.length >= spec.minLength && spec.patterns.every((p, i) => p.accepts(this.states[i]!)) ? DONE : null;
        if (this.length >= spec.maxLength) return null;
        if (byte === BACKSLASH) return this.mayTake(0, 0x10ffff) ? this.with('escape', 0, 0) : null;
        if (byte < 0x20 || byte === 0x7f) return null;
        if (byte < 0x80) return this.char(byte);
        // Lead bytes: continuations due, bits so far, the next byte's range (no overlong forms, surrogates or past U+10FFFF).
        if (byte >= 0xc2 && byte <= 0xdf) return this.utf8(1, byte & 0x1f, range(0x80, 0xbf));
        if (byte >= 0xe0 && byte <= 0xef) return byte === 0xed ? (this.mayTake(0xd000, 0xd7ff) ? this.with('utf8', 2, 0x0d, range(0x80, 0x9f)) : null) : this.utf8(2, byte & 0x0f, range(byte === 0xe0 ? 0xa0 : 0x80, 0xbf));
        if (byte >= 0xf0 && byte <= 0xf4) return this.utf8(3, byte & 0x07, range(byte === 0xf0 ? 0x90 : 0x80, byte === 0xf4 ? 0x8f : 0xbf));
        return null;
      case 'utf8': {
        if (byte < (this.extra & 0xff) || byte > this.extra >>> 8) return null;
        const cp = (this.value << 6) | (byte & 0x3f);
        return this.n === 1 ? this.char(cp) : this.utf8(this.n - 1, cp, range(0x80, 0xbf));
      }
      case 'escape': {
        if (byte === 0x75) return this.with('hex', 0, 0);
        const simple = ESCAPES[byte];
        if (simple === undefined || (byte === 0x2f && spec.dialect === 'python')) return null;
        return this.char(simple);
      }
      case 'hex':
      case 'lowHex': {
        const digit = hexValue(byte);
        if (digit < 0) return null;
        const v = (this.value << 4) | digit;
        const n = this.n + 1;
        if (phase === 'hex') {
          if (n < 4) return this.mayEscape(v, n) ? this.with(phase, n, v) : null;
          if (v >= 0xdc00 && v <= 0xdfff) return null;
          if (v >= 0xd800 && v <= 0xdbff) return this.mayLow(v, 0, 0) ? this.with('lowSlash', 0, v) : null;
          return this.char(v);
        }
        if (n < 4) return this.mayLow(this.extra, v, n) ? this.with(phase, n, v, this.extra) : null;
        if (v < 0xdc00 || v > 0xdfff) return null;
        return this.char(0x10000 + ((this.extra - 0xd800) << 10) + (v - 0xdc00));
      }
      case 'lowSlash':
        return byte === BACKSLASH ? this.with('lowU', 0, this.value) : null;
      case 'lowU':
        return byte === 0x75 ? this.with('lowHex', 0, 0, this.value) : null;
    }
  }
}

/** One frame per pattern-string state (per spec), so memoised steps loop back to the same object. */
const patternFrames = new WeakMap<StringSpec, Map<string, PatternStringFrame>>();
function internPattern(frame: PatternStringFrame): PatternStringFrame {
  let frames = patternFrames.get(frame.spec);
  if (frames === undefined) patternFrames.set(frame.spec, (frames = new Map()));
  const known = frames.get(frame.key);
  if (known !== undefined) return known;
  // Bounded: a long bounded string makes a state per length; past the bound, start afresh.
  if (frames.size >= 20_000) frames.clear();
  frames.set(frame.key, frame);
  return frame;
}

const range = (low: number, high: number): number => (high << 8) | low;
const ESCAPES: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09 };
function hexValue(b: number): number {
  if (isDigit(b)) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  return -1;
}

/**
 * Tokens that are whole string characters (plain, UTF-8, escapes), as many units as characters:
 * decided by a string frame of the dialect itself, so the class cannot drift from what the frame
 * accepts (python strings have no `\/`). A bounded frame with `length` characters accepts such a
 * token iff length + units <= maxLength.
 */
function stringTokens(dialect: Dialect, id: number, escapes = true): TokenClass {
  const any: StringSpec = { id, dialect, minLength: 0, maxLength: Infinity, patterns: [] };
  return {
    key: `${dialect}-string${escapes ? '' : '-no-escapes'}`,
    units(bytes) {
      let frame = string(any, 'content', 0);
      let characters = 0;
      for (let i = 0; i < bytes.length; i++) {
        if (!escapes && bytes[i] === BACKSLASH) return -1;
        const next = frame.step(bytes[i]!);
        if (!(next instanceof StringFrame)) return -1;
        if (next.phase === 'content') characters++;
        frame = next;
      }
      return frame.phase === 'content' ? characters : -1;
    },
  };
}
const STRING_TOKENS: Record<Dialect, TokenClass> = { json: stringTokens('json', -2), python: stringTokens('python', -3) };
/** The same without backslashes: what an undeclared key reads (MixedKeyFrame). */
const PLAIN_STRING_TOKENS: Record<Dialect, TokenClass> = { json: stringTokens('json', -4, false), python: stringTokens('python', -5, false) };

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

/**
 * A number with bounds (number-bounds.ts): `-?int(.frac)?`, no exponent, at most MAX_DIGITS
 * digits each side; a byte is taken only if some completion still meets one of the constraints.
 */
class BoundedNumberFrame extends Frame {
  private cachedKey: string | undefined;
  constructor(
    readonly spec: NumberSpec,
    readonly text: NumberText,
  ) {
    super();
  }
  get key(): string {
    const { negative, int, frac } = this.text;
    return (this.cachedKey ??= `n${this.spec.id}.${negative ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}`);
  }
  override get canPop(): boolean {
    return this.spec.constraints.some((c) => satisfied(c, this.text));
  }
  private to(text: NumberText): Step {
    return this.spec.constraints.some((c) => reachable(c, text)) ? new BoundedNumberFrame(this.spec, text) : null;
  }
  step(byte: number): Step {
    const { negative, int, frac } = this.text;
    const digit = isDigit(byte);
    if (frac !== undefined) {
      if (digit) return frac.length < MAX_DIGITS ? this.to({ negative, int, frac: frac + String.fromCharCode(byte) }) : null;
      return frac !== '' && this.canPop ? POP_REPROCESS : null;
    }
    if (int === '') {
      if (byte === 0x2d) return negative ? null : this.to({ negative: true, int: '', frac: undefined });
      return digit ? this.to({ negative, int: String.fromCharCode(byte), frac: undefined }) : null;
    }
    if (digit) return int !== '0' && int.length < MAX_DIGITS ? this.to({ negative, int: int + String.fromCharCode(byte), frac: undefined }) : null;
    if (byte === 0x2e) return this.to({ negative, int, frac: '' });
    return this.canPop ? POP_REPROCESS : null;
  }
}

const boundedStarts = new WeakMap<NumberSpec, BoundedNumberFrame>();
function boundedNumberStart(spec: NumberSpec): BoundedNumberFrame {
  let frame = boundedStarts.get(spec);
  if (frame === undefined) boundedStarts.set(spec, (frame = new BoundedNumberFrame(spec, { negative: false, int: '', frac: undefined })));
  return frame;
}

type ObjectPhase = 'open' | 'afterKey' | 'colon' | 'colonSpace' | 'afterValue' | 'comma' | 'commaSpace';

/**
 * An object after `{`. `emitted` marks declared properties already given
 * ('1' per property, in declaration order); `property` is the key just read
 * (-1: a free key); `count` the properties written (minProperties/maxProperties).
 */
class ObjectFrame extends Frame {
  readonly key: string;
  constructor(
    readonly spec: ObjectSpec,
    readonly phase: ObjectPhase,
    readonly emitted: string,
    readonly property: number,
    readonly count = 0,
  ) {
    super();
    this.key = `O${spec.id}.${phase}.${emitted}.${property}.${count}`;
  }
  private get mayClose(): boolean {
    return this.count >= this.spec.minProperties && this.spec.required.every((required, i) => !required || this.emitted[i] === '1');
  }
  private get keyRemains(): boolean {
    if (this.count >= this.spec.maxProperties) return false;
    return this.spec.additional !== null || this.spec.keyPatterns.length > 0 || this.spec.names.some((_, i) => this.emitted[i] !== '1');
  }
  private next(phase: ObjectPhase, property = -1): ObjectFrame {
    return new ObjectFrame(this.spec, phase, this.emitted, property, this.count);
  }
  step(byte: number): Step {
    const { phase } = this;
    if (this.spec.flexible && isSpace(byte)) {
      // Whitespace between tokens: after `{`, a key, `:`, a value and `,`.
      if (phase === 'open' || phase === 'afterKey' || phase === 'afterValue' || phase === 'commaSpace' || phase === 'colonSpace') return this;
      return this.next(phase === 'comma' ? 'commaSpace' : 'colonSpace', this.property);
    }
    switch (phase) {
      case 'open':
        if (byte === 0x7d) return this.mayClose ? DONE : null;
        return byte === QUOTE && this.keyRemains ? this.readKey() : null;
      case 'comma':
        if (byte === SPACE) return this.next('commaSpace');
        return byte === QUOTE ? this.readKey() : null;
      case 'commaSpace':
        return byte === QUOTE ? this.readKey() : null;
      case 'afterKey':
        return byte === COLON ? this.next('colon', this.property) : null;
      case 'colon':
        if (byte === SPACE) return this.next('colonSpace', this.property);
        return this.readValue();
      case 'colonSpace':
        return this.readValue();
      case 'afterValue':
        if (byte === 0x7d) return this.mayClose ? DONE : null;
        return byte === COMMA && this.keyRemains ? this.next('comma') : null;
    }
  }
  private readKey(): Step {
    const { spec } = this;
    // Banned keys (properties whose schema is false) are alive like names, after them: a key that spells one is refused.
    const banned = spec.banned?.length ?? 0;
    if ((spec.additional !== null && spec.names.length + banned > 0) || spec.keyPatterns.length > 0) return new MixedKeyFrame(this, 0, Array.from({ length: spec.names.length + banned }, (_, i) => i), stringStart(FREE_KEY[spec.dialect]) as StringFrame);
    if (spec.additional !== null) return new Push(stringStart(FREE_KEY[spec.dialect]), this.next('afterKey'), false);
    return new KeyFrame(this, 0, spec.names.map((_, i) => i).filter((i) => this.emitted[i] !== '1'));
  }
  private readValue(): Step {
    const { spec, property } = this;
    // property < 0: an undeclared key; -1 - property is the mask of the key patterns it matched.
    const value = property >= 0 ? spec.values[property]! : spec.keyPatterns.length > 0 ? spec.patternValues[-1 - property]! : spec.additional!;
    const emitted = property < 0 ? this.emitted : mark(this.emitted, property, spec.names.length);
    return new Push(valueStart(value), new ObjectFrame(spec, 'afterValue', emitted, -1, this.count + 1), true);
  }
}

const FREE_KEY: Record<Dialect, StringSpec> = { json: { id: 0, dialect: 'json', minLength: 0, maxLength: Infinity, patterns: [] }, python: { id: -1, dialect: 'python', minLength: 0, maxLength: Infinity, patterns: [] } };

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
    this.key = `K${object.spec.id}.${object.emitted}.${object.count}.${pos}.${alive.join(',')}`;
  }
  step(byte: number): Step {
    const keys = this.object.spec.keyBytes;
    const alive = this.alive.filter((i) => keys[i]![this.pos] === byte);
    if (alive.length === 0) return null;
    // Keys end with their closing quote, so a complete one is the only one left.
    const done = alive.find((i) => keys[i]!.length === this.pos + 1);
    if (done !== undefined) return new ObjectFrame(this.object.spec, 'afterKey', this.object.emitted, done, this.object.count);
    return new KeyFrame(this.object, this.pos + 1, alive);
  }
}

/**
 * A key of an object that takes undeclared keys beside declared ones (undeclaredProperties
 * 'schema'), or whose undeclared keys' schemas depend on patternProperties: a declared name not yet
 * given (its value then reads that property's schema), or any other key (additionalProperties, or
 * the patterns it matches: `pstates` runs each pattern over the key's characters). A key that
 * spells a declared name is that name, so an other key is written without escapes (an escape
 * could spell a declared name in other bytes).
 */
class MixedKeyFrame extends Frame {
  private cachedKey: string | undefined;
  constructor(
    readonly object: ObjectFrame,
    readonly pos: number,
    /** Declared names (given or not) whose key bytes match so far. */
    readonly alive: readonly number[],
    /** The same bytes read as an other key; null once that is impossible. */
    readonly free: StringFrame | null,
    /** Each key pattern's automaton state (-1: it can no longer match). */
    readonly pstates: readonly number[] = object.spec.keyPatterns.map((p) => p.start),
    /** A UTF-8 character being read: its bits so far, and continuation bytes due. */
    readonly cp = 0,
    readonly due = 0,
  ) {
    super();
  }
  /**
   * While the key may still be an undeclared one that is allowed whatever it matches, every token
   * of whole characters without a backslash or quote is taken (by that path): a free run.
   */
  override freeRun(): FreeRun | undefined {
    const { spec } = this.object;
    const open = spec.keyPatterns.length === 0 || spec.patternValues[0] !== null;
    return open && this.free !== null && this.free.phase === 'content' ? { tokens: PLAIN_STRING_TOKENS[spec.dialect], budget: Infinity } : undefined;
  }
  get key(): string {
    const { object: o, alive, pos, free } = this;
    return (this.cachedKey ??= `M${o.spec.id}.${o.emitted}.${o.count}.${alive.length > 0 ? `${pos}:${alive.join(',')}` : '-'}.${free?.key ?? 'x'}.${this.pstates.join(',')}.${this.cp}.${this.due}`);
  }
  step(byte: number): Step {
    const { spec, emitted, count } = this.object;
    const keys = spec.keyBytes;
    const keyAt = (i: number): Uint8Array => (i < keys.length ? keys[i]! : spec.banned![i - keys.length]!);
    const alive = this.alive.filter((i) => keyAt(i)[this.pos] === byte);
    const done = alive.find((i) => keyAt(i).length === this.pos + 1);
    if (done !== undefined) return done >= keys.length || emitted[done] === '1' ? null : new ObjectFrame(spec, 'afterKey', emitted, done, count);
    let free: StringFrame | null = null;
    let { pstates, cp, due } = this;
    if (this.free !== null && byte !== BACKSLASH) {
      const r = this.free.step(byte);
      if (r === DONE) {
        if (spec.keyPatterns.length === 0) return new ObjectFrame(spec, 'afterKey', emitted, -1, count);
        // Which patterns the key matches decides its value's schema (property -1 - mask).
        let mask = 0;
        spec.keyPatterns.forEach((p, i) => {
          if (pstates[i]! >= 0 && p.accepts(pstates[i]!)) mask |= 1 << i;
        });
        return spec.patternValues[mask] === null ? null : new ObjectFrame(spec, 'afterKey', emitted, -1 - mask, count);
      }
      if (r instanceof StringFrame) {
        free = r;
        if (spec.keyPatterns.length > 0) {
          // Decode the character (the string frame has checked the UTF-8) and run the patterns over it.
          if (due > 0) {
            cp = (cp << 6) | (byte & 0x3f);
            due--;
          } else if (byte >= 0xf0) [cp, due] = [byte & 0x07, 3];
          else if (byte >= 0xe0) [cp, due] = [byte & 0x0f, 2];
          else if (byte >= 0xc0) [cp, due] = [byte & 0x1f, 1];
          else cp = byte;
          if (due === 0) {
            pstates = spec.keyPatterns.map((p, i) => (pstates[i]! < 0 ? -1 : p.step(pstates[i]!, cp)));
            cp = 0;
            // Without additionalProperties, a key must still be able to match some pattern.
            if (spec.patternValues[0] === null && pstates.every((st) => st < 0)) free = null;
          }
        }
      }
    }
    if (alive.length === 0 && free === null) return null;
    return new MixedKeyFrame(this.object, alive.length > 0 ? this.pos + 1 : 0, alive, free, pstates, cp, due);
  }
}

type ArrayPhase = 'open' | 'afterValue' | 'comma';

/** Whether an array's frames count items: it has bounds or prefix items. */
const tracks = (spec: ArraySpec): boolean => spec.minItems > 0 || spec.maxItems !== Infinity || spec.prefix.length > 0;
/** The schema of item `index`: a prefix item, else `items` (null: no more items). */
const itemAt = (spec: ArraySpec, index: number): ValueSpec | null => (index < spec.prefix.length ? spec.prefix[index]! : spec.items);

/** An array after `[`; `count` (items so far) is tracked only when the spec bounds it or has prefix items. */
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
    const counted = tracks(spec);
    if (spec.flexible && isSpace(byte)) return phase === 'comma' ? new ArraySpaceFrame(spec, count) : this;
    switch (phase) {
      case 'open':
        if (byte === 0x5d) return spec.minItems === 0 ? DONE : null;
        return this.item(count);
      case 'afterValue':
        if (byte === 0x5d) return !counted || count >= spec.minItems ? DONE : null;
        return byte === COMMA && (!counted || (count < spec.maxItems && itemAt(spec, count) !== null)) ? new ArrayFrame(spec, 'comma', count) : null;
      case 'comma':
        if (byte === SPACE) return new ArraySpaceFrame(spec, count);
        return this.item(count);
    }
  }
  /** Reads item `index` (reprocessing the byte), or null when none may come. */
  item(index: number): Step {
    const { spec } = this;
    if (index >= spec.maxItems) return null;
    const value = itemAt(spec, tracks(spec) ? index : 0);
    if (value === null) return null;
    return new Push(valueStart(value), new ArrayFrame(spec, 'afterValue', tracks(spec) ? index + 1 : 0), true);
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
  step(byte: number): Step {
    if (this.spec.flexible && isSpace(byte)) return this;
    return new ArrayFrame(this.spec, 'comma', this.count).item(this.count);
  }
}
