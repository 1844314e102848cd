/**
 * Turns a request's generated token ids into text deltas: incremental
 * detokenization that never emits half a character, and stop strings that are
 * held back until they can no longer match.
 */

/** The one tokenizer capability the engine needs (a Tokenizer has it). */
export interface TokenDecoder {
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
}

/** Prompt tokens that seed the decoding window, so the first output token keeps its leading space. */
const PROMPT_CONTEXT = 5;
const REPLACEMENT = 0xfffd;

/**
 * Decodes a sliding window of ids: the text of `window` (context + pending
 * ids) minus the text of `context` is new. A delta ending in U+FFFD is an
 * incomplete UTF-8 sequence and waits for the next token. Once text is
 * emitted, the ids that produced it become the next context. Cost per token is
 * bounded by the window, not the output length.
 */
export class IncrementalDetokenizer {
  private readonly decoder: TokenDecoder;
  /** Ids already turned into text, kept as decoding context (leading spaces, merges). Never mutated. */
  private context: number[];
  /** `context` followed by the ids whose text has not been emitted yet. */
  private readonly window: number[];
  /** Decoded `context`; it changes only when text is emitted, so it is decoded once per emission. */
  private contextText: string | undefined;
  private readonly decodeOptions: { readonly skipSpecialTokens: boolean };

  /** `skipSpecialTokens: false` keeps special tokens' text (tool-call markers of some formats). */
  constructor(decoder: TokenDecoder, promptTokenIds: readonly number[], skipSpecialTokens = true) {
    this.decoder = decoder;
    this.decodeOptions = { skipSpecialTokens };
    this.context = promptTokenIds.slice(-PROMPT_CONTEXT);
    this.window = this.context.slice();
  }

  /** Adds one token and returns the text it completes ('' while a character is incomplete). */
  push(token: number): string {
    this.window.push(token);
    const before = (this.contextText ??= this.decoder.decode(this.context, this.decodeOptions));
    const after = this.decoder.decode(this.window, this.decodeOptions);
    if (after.length <= before.length || after.charCodeAt(after.length - 1) === REPLACEMENT) return '';
    // The pending ids become the context; the window drops the old context in place.
    const dropped = this.context.length;
    this.context = this.window.slice(dropped);
    // Usually one id; shift() moves the array's start instead of copying it.
    for (let i = 0; i < dropped; i++) this.window.shift();
    this.contextText = undefined;
    return after.slice(before.length);
  }

  /**
   * The text of ids still held back (an incomplete character when generation
   * ended), with U+FFFD where bytes are missing: at the end nothing is withheld.
   */
  flush(): string {
    if (this.window.length === this.context.length) return '';
    const before = (this.contextText ??= this.decoder.decode(this.context, this.decodeOptions));
    const after = this.decoder.decode(this.window, this.decodeOptions);
    this.context = this.window.slice();
    this.contextText = after;
    return after.slice(before.length);
  }
}

export interface StopResult {
  /** Text that is safe to emit now. */
  readonly text: string;
  /** Set when a stop string matched: the text stops before it. */
  readonly stopped: boolean;
}

/**
 * Holds back the last (longest stop - 1) characters until they cannot start a
 * stop string. A matched stop string is not part of the output.
 */
export class StopStringMatcher {
  private readonly stops: readonly string[];
  /** No stop strings: `push` passes text through unchanged, so a caller may skip it. */
  readonly isEmpty: boolean;
  private readonly holdBack: number;
  private pending = '';

  constructor(stops: readonly string[]) {
    this.stops = stops;
    this.isEmpty = stops.length === 0;
    this.holdBack = stops.reduce((max, stop) => Math.max(max, stop.length - 1), 0);
  }

  push(delta: string): StopResult {
    if (this.stops.length === 0) return { text: delta, stopped: false };
    this.pending += delta;
    let earliest = -1;
    for (const stop of this.stops) {
      const at = this.pending.indexOf(stop);
      if (at !== -1 && (earliest === -1 || at < earliest)) earliest = at;
    }
    if (earliest !== -1) {
      const text = this.pending.slice(0, earliest);
      this.pending = '';
      return { text, stopped: true };
    }
    let emit = Math.max(0, this.pending.length - this.holdBack);
    // Never split a surrogate pair between what is emitted and what is held.
    if (emit > 0 && isHighSurrogate(this.pending.charCodeAt(emit - 1))) emit--;
    const text = this.pending.slice(0, emit);
    this.pending = this.pending.slice(emit);
    return { text, stopped: false };
  }

  /** The held-back text, released when generation ends for another reason. */
  flush(): string {
    const text = this.pending;
    this.pending = '';
    return text;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
