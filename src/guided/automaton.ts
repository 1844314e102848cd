/**
 * The character-level automaton every grammar is built from: a stack of
 * immutable frames, advanced one byte at a time.
 *
 * Invariants:
 * - A frame never changes; stepping returns a new frame (or the same one when
 *   nothing changed, which is what keeps the vocabulary walk in grammar.ts free of
 *   allocation inside strings and free text).
 * - A frame's `key` names its state completely (together with the keys below it),
 *   so equal stack keys accept exactly the same futures: masks are cached by key.
 * - The bottom of every stack is END, which accepts nothing: a stack whose top is
 *   END is complete.
 */
import type { FreeRun } from './free-runs.js';

/** What a frame does with one byte. */
export type Step = Frame | Push | typeof DONE | typeof POP_REPROCESS | null;

/** The frame's construct ended with this byte (consumed): pop it. */
export const DONE = Symbol('done');
/** The frame's construct ended before this byte (a number, an enum that could go on): pop, and feed the byte below. */
export const POP_REPROCESS = Symbol('pop-reprocess');

/** Replace the top with `then` and push `child`; with `reprocess`, the child then reads the byte. */
export class Push {
  constructor(
    readonly child: Frame,
    readonly then: Frame,
    readonly reprocess: boolean,
  ) {}
}

export abstract class Frame {
  /** Unique among frames of one grammar: the frame's kind, its construct's id and its state. */
  abstract readonly key: string;
  /** Whether the construct may end here without reading another byte. */
  get canPop(): boolean {
    return false;
  }
  /** Whether the construct has ended and only waits to be popped (a sequence past its last part). */
  get finished(): boolean {
    return false;
  }
  /**
   * For masks: a class of tokens this frame reads whole by itself, accepting exactly those of at
   * most `budget` units (the invariant in free-runs.ts); undefined (the default) promises nothing.
   */
  freeRun(): FreeRun | undefined {
    return undefined;
  }
  /**
   * Free text: the bytes (flags, by value) that can end it. A token with none of them is accepted
   * from this frame whatever lies below, and a free-text frame stays on top, so the engine may
   * sample first and check (grammar.ts: isFreeText); its masks come from `freeRun()`, the class of
   * tokens without these bytes. Null for every other frame.
   */
  get guardBytes(): Uint8Array | null {
    return null;
  }
  abstract step(byte: number): Step;
}

class EndFrame extends Frame {
  readonly key = 'E';
  step(): Step {
    return null;
  }
}

export const END = new EndFrame();

export class Stack {
  constructor(
    readonly frame: Frame,
    readonly next: Stack | null,
  ) {}
}

export const END_STACK = new Stack(END, null);

/** The stack after `byte`, or null if the grammar rejects it. */
export function advance(stack: Stack | null, byte: number): Stack | null {
  let s = stack;
  for (;;) {
    if (s === null) return null;
    const frame = s.frame;
    const r = frame.step(byte);
    if (r === null) return null;
    if (r === frame) return s;
    if (r === DONE) return settle(s.next);
    if (r === POP_REPROCESS) {
      s = s.next;
      continue;
    }
    if (r instanceof Push) {
      const pushed = new Stack(r.child, new Stack(r.then, s.next));
      if (!r.reprocess) return settle(pushed);
      s = pushed;
      continue;
    }
    return settle(new Stack(r, s.next));
  }
}

/** Pops frames that have ended, so that a grammar whose last part is done is complete at once. */
export function settle(stack: Stack | null): Stack | null {
  let s = stack;
  while (s !== null && s.frame.finished) s = s.next;
  return s;
}

/** Whether the grammar may end here: the top is END, or every frame down to END may pop. */
export function canEnd(stack: Stack): boolean {
  for (let s: Stack | null = stack; s !== null; s = s.next) {
    if (s.frame === END) return true;
    if (!s.frame.canPop) return false;
  }
  return false;
}

/** Whether nothing can follow: the top is END. */
export function isComplete(stack: Stack): boolean {
  return stack.frame === END;
}

export function stackKey(stack: Stack): string {
  let key = stack.frame.key;
  for (let s = stack.next; s !== null; s = s.next) key += '|' + s.frame.key;
  return key;
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
