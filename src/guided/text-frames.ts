/**
 * Frames for literal text and free text: fixed literals and prefix-free choices
 * between them (tool formats' tags and names), text up to a terminator
 * (reasoning), text that never contains a marker (toolChoice "none"), and
 * sequences of sub-grammars.
 */
import { DONE, Frame, POP_REPROCESS, Push, utf8, type Step } from './automaton.js';
import { freeTextRun, type FreeRun } from './free-runs.js';

let nextId = 1;
/** Ids that make frame keys unique per construct. */
export const newId = (): number => nextId++;

export interface ChoiceOption {
  readonly lead: Uint8Array;
  /** What follows once `lead` is complete: a frame replacing the choice, or DONE. */
  readonly next: () => Frame | typeof DONE;
}

/**
 * A choice between literals, none a prefix of another (tool names end with a
 * quote or `>`, so they are): when one is complete it is the only one left.
 */
export class Choice {
  readonly id = newId();
  readonly options: readonly ChoiceOption[];
  constructor(options: readonly ChoiceOption[]) {
    for (const a of options) {
      for (const b of options) {
        if (a !== b && a.lead.length <= b.lead.length && a.lead.every((byte, i) => b.lead[i] === byte)) {
          throw new Error(`choice leads are not prefix-free: ${new TextDecoder().decode(a.lead)} / ${new TextDecoder().decode(b.lead)}`);
        }
      }
    }
    this.options = options;
  }
  start(): ChoiceFrame {
    return new ChoiceFrame(this, 0, this.options.map((_, i) => i));
  }
}

export class ChoiceFrame extends Frame {
  readonly key: string;
  constructor(
    readonly choice: Choice,
    readonly pos: number,
    readonly alive: readonly number[],
  ) {
    super();
    this.key = `C${choice.id}.${pos}.${alive.length === choice.options.length ? '*' : alive.join(',')}`;
  }
  step(byte: number): Step {
    const options = this.choice.options;
    const alive: number[] = [];
    for (const i of this.alive) if (options[i]!.lead[this.pos] === byte) alive.push(i);
    if (alive.length === 0) return null;
    const done = alive.find((i) => options[i]!.lead.length === this.pos + 1);
    if (done !== undefined) return options[done]!.next();
    return new ChoiceFrame(this.choice, this.pos + 1, alive);
  }
}

export function literal(text: string): Choice {
  return new Choice([{ lead: utf8(text), next: () => DONE }]);
}

/** One part of a sequence: something that starts a frame. */
export interface Part {
  start(): Frame;
}

export const literalPart = (text: string): Part => {
  const choice = literal(text);
  return { start: () => choice.start() };
};

/** Parts one after another. */
export class Sequence implements Part {
  readonly id = newId();
  private readonly frames: SequenceFrame[];
  constructor(readonly parts: readonly Part[]) {
    this.frames = parts.map((_, i) => new SequenceFrame(this, i));
  }
  start(): Frame {
    return this.frames[0] ?? new SequenceFrame(this, 0);
  }
  frameAt(index: number): Frame | null {
    return this.frames[index] ?? null;
  }
}

class SequenceFrame extends Frame {
  readonly key: string;
  constructor(
    readonly sequence: Sequence,
    readonly index: number,
  ) {
    super();
    this.key = `S${sequence.id}.${index}`;
  }
  /** The parts left may all be empty (whitespace, calls that may stop): the sequence may end here. */
  override get canPop(): boolean {
    const parts = this.sequence.parts;
    for (let i = this.index; i < parts.length; i++) if (!parts[i]!.start().canPop) return false;
    return true;
  }
  override get finished(): boolean {
    return this.index >= this.sequence.parts.length;
  }
  step(): Step {
    const part = this.sequence.parts[this.index];
    if (part === undefined) return POP_REPROCESS;
    const then = this.sequence.frameAt(this.index + 1) ?? new SequenceFrame(this.sequence, this.index + 1);
    return new Push(part.start(), then, true);
  }
}

/**
 * Text that never contains any of `markers`, and may end anywhere. States are
 * the longest suffix of the text that begins a marker (as in Aho-Corasick),
 * computed on demand and kept, so the walk allocates nothing once warm.
 */
export class AvoidText implements Part {
  readonly id = newId();
  private readonly markers: readonly string[];
  private readonly frames = new Map<string, AvoidFrame>();
  private readonly latin1: boolean;
  /** The markers' last bytes: a marker completes only on one, so tokens without any stay in the text. */
  readonly guardBytes = new Uint8Array(256);
  /** Masks: those tokens, then a walk of the others (free-runs.ts). */
  readonly freeRun: FreeRun;
  constructor(markers: readonly string[]) {
    // Markers are matched bytewise; they are ASCII in every format weft knows.
    this.markers = markers;
    for (const marker of markers) this.guardBytes[marker.charCodeAt(marker.length - 1)] = 1;
    this.latin1 = markers.every((m) => /^[\x20-\x7e]*$/.test(m));
    if (!this.latin1) throw new Error('AvoidText markers must be printable ASCII');
    if (markers.some((m) => m.length === 0)) throw new Error('AvoidText markers must not be empty');
    this.freeRun = freeTextRun(this.guardBytes);
  }
  start(): Frame {
    return this.frame('');
  }
  frame(suffix: string): AvoidFrame {
    let frame = this.frames.get(suffix);
    if (frame === undefined) {
      frame = new AvoidFrame(this, suffix);
      this.frames.set(suffix, frame);
    }
    return frame;
  }
  /** The state after `byte`, or null when a marker is complete. */
  next(suffix: string, byte: number): string | null {
    const text = suffix + String.fromCharCode(byte);
    for (const marker of this.markers) if (text.endsWith(marker)) return null;
    for (let k = 0; k < text.length; k++) {
      const tail = text.slice(k);
      if (this.markers.some((m) => m.startsWith(tail))) return tail;
    }
    return '';
  }
}

class AvoidFrame extends Frame {
  readonly key: string;
  private readonly transitions = new Map<number, AvoidFrame | null>();
  constructor(
    readonly text: AvoidText,
    readonly suffix: string,
  ) {
    super();
    this.key = `V${text.id}.${suffix}`;
  }
  override get canPop(): boolean {
    return true;
  }
  override freeRun(): FreeRun {
    return this.text.freeRun;
  }
  override get guardBytes(): Uint8Array {
    return this.text.guardBytes;
  }
  step(byte: number): Step {
    let next = this.transitions.get(byte);
    if (next === undefined) {
      const suffix = this.text.next(this.suffix, byte);
      next = suffix === null ? null : this.text.frame(suffix);
      this.transitions.set(byte, next);
    }
    return next;
  }
}

/** Any text up to and including `terminator` (a reasoning block up to `</think>`). */
export class TextUntil implements Part {
  readonly id = newId();
  readonly terminator: Uint8Array;
  /** KMP failure function of the terminator. */
  private readonly failure: Int32Array;
  private readonly frames: UntilFrame[];
  /** The terminator's last byte: only it can end the text, so tokens without it stay in it. */
  readonly guardBytes = new Uint8Array(256);
  /** Masks: those tokens, then a walk of the others (free-runs.ts). */
  readonly freeRun: FreeRun;
  constructor(terminator: string) {
    this.terminator = utf8(terminator);
    const t = this.terminator;
    this.guardBytes[t[t.length - 1]!] = 1;
    this.freeRun = freeTextRun(this.guardBytes);
    this.failure = new Int32Array(t.length);
    for (let i = 1, k = 0; i < t.length; i++) {
      while (k > 0 && t[i] !== t[k]) k = this.failure[k - 1]!;
      if (t[i] === t[k]) k++;
      this.failure[i] = k;
    }
    this.frames = Array.from({ length: t.length }, (_, k) => new UntilFrame(this, k));
  }
  start(): Frame {
    return this.frames[0]!;
  }
  step(matched: number, byte: number): Step {
    const t = this.terminator;
    let k = matched;
    while (k > 0 && t[k] !== byte) k = this.failure[k - 1]!;
    if (t[k] === byte) k++;
    if (k === t.length) return DONE;
    return this.frames[k]!;
  }
}

class UntilFrame extends Frame {
  readonly key: string;
  constructor(
    readonly until: TextUntil,
    readonly matched: number,
  ) {
    super();
    this.key = `U${until.id}.${matched}`;
  }
  override freeRun(): FreeRun {
    return this.until.freeRun;
  }
  override get guardBytes(): Uint8Array {
    return this.until.guardBytes;
  }
  step(byte: number): Step {
    return this.until.step(this.matched, byte);
  }
}

/** Up to `max` bytes from `allowed` (optional whitespace between parts). */
export class Optional implements Part {
  readonly id = newId();
  private readonly frames: OptionalFrame[];
  constructor(
    readonly allowed: string,
    readonly max: number,
  ) {
    this.frames = Array.from({ length: max + 1 }, (_, n) => new OptionalFrame(this, n));
  }
  start(): Frame {
    return this.frames[0]!;
  }
  frameAt(n: number): Frame {
    return this.frames[n]!;
  }
}

class OptionalFrame extends Frame {
  readonly key: string;
  constructor(
    readonly optional: Optional,
    readonly count: number,
  ) {
    super();
    this.key = `W${optional.id}.${count}`;
  }
  override get canPop(): boolean {
    return true;
  }
  step(byte: number): Step {
    if (this.count < this.optional.max && this.optional.allowed.includes(String.fromCharCode(byte))) return this.optional.frameAt(this.count + 1);
    return POP_REPROCESS;
  }
}
