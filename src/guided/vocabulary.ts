/**
 * A tokenizer's vocabulary as bytes, in a trie, so that a mask is one walk
 * that skips every token sharing a rejected prefix.
 *
 * Token bytes come from the token strings: byte-level BPE (GPT-2's byte to
 * unicode table, Qwen, Llama 3) or SentencePiece style (`▁` for a space,
 * `<0xAB>` byte fallback), decided once for the vocabulary. Special tokens
 * (those decode() drops with skipSpecialTokens) have no bytes: grammars never
 * emit them as text; the end tokens are allowed separately where the grammar may end.
 */
import type { Tokenizer } from '../text/types.js';
import { FreeRunIndex, type TokenClass } from './free-runs.js';
import { TokenTrie } from './token-trie.js';

/** GPT-2's byte -> printable character table, inverted. */
function byteLevelDecoder(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bytes.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bytes.push(b);
  for (let b = 0xae; b <= 0xff; b++) bytes.push(b);
  const chars = bytes.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + n++);
    }
  }
  return new Map(bytes.map((b, i) => [String.fromCodePoint(chars[i]!), b]));
}

export class Vocabulary {
  /** Bytes of each token id; null for special tokens and ids the tokenizer does not have. */
  readonly tokenBytes: readonly (Uint8Array | null)[];
  readonly size: number;
  /** Every token with bytes. */
  readonly trie: TokenTrie;
  private readonly freeRuns = new Map<string, FreeRunIndex>();

  /** `size` is the logits row length (the backend's vocabulary, which may exceed the tokenizer's). */
  constructor(tokenBytes: readonly (Uint8Array | null)[], size: number) {
    this.tokenBytes = tokenBytes;
    this.size = size;
    const ids = [];
    for (let id = 0; id < tokenBytes.length && id < size; id++) if (tokenBytes[id] && tokenBytes[id]!.length > 0) ids.push(id);
    this.trie = new TokenTrie(tokenBytes, ids, size);
  }

  get numNodes(): number {
    return this.trie.numNodes;
  }

  /** The tokens of `tokens` sorted out of this vocabulary (once per class key: one pass over the tokens). */
  freeRunIndex(tokens: TokenClass): FreeRunIndex {
    let index = this.freeRuns.get(tokens.key);
    if (index === undefined) {
      index = new FreeRunIndex(this.tokenBytes, this.size, tokens);
      this.freeRuns.set(tokens.key, index);
    }
    return index;
  }

  /** The vocabulary of a weft Tokenizer; `size` is the logits row length. */
  static fromTokenizer(tokenizer: Tokenizer, size: number): Vocabulary {
    const n = Math.min(tokenizer.vocabSize, size);
    const strings: (string | undefined)[] = [];
    for (let id = 0; id < n; id++) strings.push(tokenizer.idToToken(id));
    const sentencePiece = strings.some((s) => s !== undefined && (s.includes('\u2581') || /^<0x[0-9A-Fa-f]{2}>$/.test(s)));
    const byteLevel = byteLevelDecoder();
    const encoder = new TextEncoder();
    const bytes: (Uint8Array | null)[] = strings.map((s, id) => {
      if (s === undefined || s.length === 0) return null;
      // Special tokens decode to nothing when special tokens are skipped.
      if (s.length > 1 && (s.startsWith('<') || s.startsWith('[')) && tokenizer.decode([id], { skipSpecialTokens: true }) === '' && tokenizer.decode([id], { skipSpecialTokens: false }) !== '') return null;
      if (sentencePiece) {
        const fallback = /^<0x([0-9A-Fa-f]{2})>$/.exec(s);
        if (fallback) return Uint8Array.of(parseInt(fallback[1]!, 16));
        return encoder.encode(s.replaceAll('\u2581', ' '));
      }
      const out: number[] = [];
      for (const ch of s) {
        const b = byteLevel.get(ch);
        if (b === undefined) return encoder.encode(s); // an added token written as plain text
        out.push(b);
      }
      return Uint8Array.from(out);
    });
    return new Vocabulary(bytes, size);
  }
}
