/**
 * Raw text as a tag-delimited format writes a string value (no quotes, no
 * escapes): the frames that keep it valid UTF-8, free of `<`, within its
 * schema's length bounds, and ended by a newline before the next tag.
 */
import { Frame, POP_REPROCESS, type Step } from './automaton.js';
import { newId } from './text-frames.js';

/**
 * A raw string value up to its closing tag: valid UTF-8 without `<` (so it can
 * hold no tag), ending with the newline the parser strips; the length bounds
 * count characters before that newline.
 */
export class RawText {
  readonly id = newId();
  readonly bounded: boolean;
  private readonly frames = new Map<string, RawTextFrame>();
  constructor(
    readonly minLength: number,
    readonly maxLength: number,
  ) {
    this.bounded = minLength > 0 || maxLength !== Infinity;
  }
  start(): Frame {
    return this.frame(0, false, 0);
  }
  /** Unbounded values do not count their length, so they have few states. */
  frame(length: number, afterNewline: boolean, utf8: number): RawTextFrame {
    const key = `${this.bounded ? length : 0}.${afterNewline ? 1 : 0}.${utf8}`;
    let frame = this.frames.get(key);
    if (frame === undefined) {
      frame = new RawTextFrame(this, this.bounded ? length : 0, afterNewline, utf8);
      this.frames.set(key, frame);
    }
    return frame;
  }
}

/** UTF-8 inside a character: [lowest, highest] allowed next byte and the state after it (as json-frames.ts checks strings). */
const UTF8_NEXT: readonly (readonly [number, number, number])[] = [
  [0, 0, 0],
  [0x80, 0xbf, 0],
  [0x80, 0xbf, 1],
  [0x80, 0xbf, 2],
  [0xa0, 0xbf, 1], // after E0: no overlong forms
  [0x80, 0x9f, 1], // after ED: no surrogates
  [0x90, 0xbf, 2], // after F0: no overlong forms
  [0x80, 0x8f, 2], // after F4: nothing past U+10FFFF
];

/** The UTF-8 state after a lead byte, or -1 if it cannot start a character. */
function utf8Lead(byte: number): number {
  if (byte < 0x80) return 0;
  if (byte >= 0xc2 && byte <= 0xdf) return 1;
  if (byte === 0xe0) return 4;
  if (byte === 0xed) return 5;
  if (byte >= 0xe1 && byte <= 0xef) return 2;
  if (byte === 0xf0) return 6;
  if (byte === 0xf4) return 7;
  if (byte >= 0xf1 && byte <= 0xf3) return 3;
  return -1;
}

class RawTextFrame extends Frame {
  readonly key: string;
  constructor(
    readonly raw: RawText,
    readonly length: number,
    readonly afterNewline: boolean,
    /** 0 between characters, else the UTF8_NEXT entry of the character being read. */
    readonly utf8: number,
  ) {
    super();
    this.key = `R${raw.id}.${length}.${afterNewline ? 1 : 0}.${utf8}`;
  }
  step(byte: number): Step {
    const { raw, length } = this;
    if (this.utf8 !== 0) {
      const [lo, hi, after] = UTF8_NEXT[this.utf8]!;
      return byte >= lo && byte <= hi ? raw.frame(length, false, after) : null;
    }
    // `length` counts the final newline too (unbounded values do not count at all).
    if (byte === 0x3c) return this.afterNewline && (!raw.bounded || length - 1 >= raw.minLength) ? POP_REPROCESS : null;
    if (byte < 0x20 && byte !== 0x0a && byte !== 0x09) return null;
    const utf8 = utf8Lead(byte);
    if (utf8 === -1) return null;
    const newline = byte === 0x0a;
    if (raw.bounded && length >= raw.maxLength && !newline) return null;
    if (raw.bounded && length > raw.maxLength) return null;
    return raw.frame(length + 1, newline, utf8);
  }
}
