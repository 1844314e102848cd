/**
 * Turns a request's generated token ids into text deltas: incremental
 * detokenization that never emits half a character. Stop strings are applied
 * to these deltas afterwards (stop-strings.ts).
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
