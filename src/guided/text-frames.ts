/**
 * Frames for literal text: fixed literals and prefix-free choices between them
 * (tool formats' tags and names), optional whitespace, and sequences of
 * sub-grammars. Free text (reasoning, "none", tool-guided "auto") is
 * trigger-text.ts.
 */
import { DONE, Frame, POP_REPROCESS, Push, utf8, type Step } from './automaton.js';

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
