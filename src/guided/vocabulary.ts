/**
 * A tokenizer's vocabulary as bytes, in a trie, so that a mask is one walk
 * that skips every token sharing a rejected prefix.
 *
 * Token bytes come from the token strings: byte-level BPE (GPT-2's byte to
 * unicode table, Qwen, Llama 3) or SentencePiece style (`▁` for a space,
 * `<0xAB>` byte fallback), decided once for the vocabulary. Special tokens
 * (those decode() drops with skipSpecialTokens) have no bytes: grammars never
 * emit them as text; the end tokens are allowed separately where the grammar may end,
 * and a grammar may ask for a special token by its text (`specialTokens`, a tool
 * format's `[TOOL_CALLS]`), as one symbol (automaton.ts).
 */
import type { Tokenizer } from '../text/types.js';

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
  // The trie, as parallel arrays. Node 0 is the root.
  readonly firstChild: Int32Array;
  readonly nextSibling: Int32Array;
  readonly byteOf: Uint8Array;
  /** First token ending at each node (-1: none); more tokens with the same bytes follow in `sameBytes`. */
  readonly tokenAt: Int32Array;
  readonly sameBytes: Int32Array;
  /** Special tokens by their text (the first id of a text), for grammars that write one; ids below `size`. */
  readonly specialTokens: ReadonlyMap<string, number>;
  /** Their ids, ascending (the ones a mask walk tries besides the trie). */
  readonly specialIds: readonly number[];

  /** `size` is the logits row length (the backend's vocabulary, which may exceed the tokenizer's). */
  constructor(tokenBytes: readonly (Uint8Array | null)[], size: number, specialTokens: ReadonlyMap<string, number> = new Map()) {
    this.tokenBytes = tokenBytes;
    this.size = size;
    this.specialTokens = new Map([...specialTokens].filter(([, id]) => id < size && !tokenBytes[id]));
    this.specialIds = [...new Set(this.specialTokens.values())].sort((a, b) => a - b);
    const ids = [];
    for (let id = 0; id < tokenBytes.length && id < size; id++) if (tokenBytes[id] && tokenBytes[id]!.length > 0) ids.push(id);
    ids.sort((a, b) => compareBytes(tokenBytes[a]!, tokenBytes[b]!));
    let capacity = 1024;
    let firstChild: Int32Array<ArrayBuffer> = new Int32Array(capacity).fill(-1);
    let nextSibling: Int32Array<ArrayBuffer> = new Int32Array(capacity).fill(-1);
    let byteOf = new Uint8Array(capacity);
    let tokenAt: Int32Array<ArrayBuffer> = new Int32Array(capacity).fill(-1);
    const lastChild: number[] = [-1];
    let nodes = 1;
    const sameBytes = new Int32Array(size).fill(-1);
    // Sorted order: each token shares a prefix with the previous one; `path` holds that prefix's nodes.
    const path: number[] = [0];
    let previous: Uint8Array = new Uint8Array(0);
    for (const id of ids) {
      const bytes = tokenBytes[id]!;
      let common = 0;
      while (common < bytes.length && common < previous.length && bytes[common] === previous[common]) common++;
      path.length = common + 1;
      for (let d = common; d < bytes.length; d++) {
        if (nodes === capacity) {
          capacity *= 2;
          firstChild = grow(firstChild, capacity, -1);
          nextSibling = grow(nextSibling, capacity, -1);
          tokenAt = grow(tokenAt, capacity, -1);
          const b = new Uint8Array(capacity);
          b.set(byteOf);
          byteOf = b;
        }
        const node = nodes++;
        const parent = path[d]!;
        byteOf[node] = bytes[d]!;
        lastChild[node] = -1;
        if (lastChild[parent] === -1) firstChild[parent] = node;
        else nextSibling[lastChild[parent]!] = node;
        lastChild[parent] = node;
        path.push(node);
      }
      const end = path[bytes.length]!;
      if (tokenAt[end] === -1) tokenAt[end] = id;
      else {
        sameBytes[id] = sameBytes[tokenAt[end]!]!;
        sameBytes[tokenAt[end]!] = id;
      }
      previous = bytes;
    }
    this.firstChild = firstChild.subarray(0, nodes);
    this.nextSibling = nextSibling.subarray(0, nodes);
    this.byteOf = byteOf.subarray(0, nodes);
    this.tokenAt = tokenAt.subarray(0, nodes);
    this.sameBytes = sameBytes;
  }

  get numNodes(): number {
    return this.firstChild.length;
  }

  /** The vocabulary of a weft Tokenizer; `size` is the logits row length. */
  static fromTokenizer(tokenizer: Tokenizer, size: number): Vocabulary {
    const n = Math.min(tokenizer.vocabSize, size);
    const strings: (string | undefined)[] = [];
    for (let id = 0; id < n; id++) strings.push(tokenizer.idToToken(id));
    const specialTokens = new Map<string, number>();
    const special = strings.map((s, id) => {
      // Special tokens decode to nothing when special tokens are skipped.
      if (s === undefined || s.length <= 1 || !(s.startsWith('<') || s.startsWith('['))) return false;
      if (tokenizer.decode([id], { skipSpecialTokens: true }) !== '') return false;
      const text = tokenizer.decode([id], { skipSpecialTokens: false });
      if (text === '') return false;
      if (!specialTokens.has(text)) specialTokens.set(text, id);
      return true;
    });
    // Decided on ordinary tokens: added ones such as DeepSeek's `<｜tool▁sep｜>` contain `▁` in a byte-level vocabulary.
    const ordinary = (s: string | undefined, id: number): s is string => s !== undefined && !special[id] && !/^<[^<>]+>$/.test(s);
    const sentencePiece = strings.some((s, id) => (ordinary(s, id) && s.includes('\u2581')) || (s !== undefined && /^<0x[0-9A-Fa-f]{2}>$/.test(s)));
    const byteLevel = byteLevelDecoder();
    const encoder = new TextEncoder();
    const bytes: (Uint8Array | null)[] = strings.map((s, id) => {
      if (s === undefined || s.length === 0 || special[id]) return null;
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
    return new Vocabulary(bytes, size, specialTokens);
  }
}

function grow(a: Int32Array, capacity: number, fill: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(capacity).fill(fill);
  b.set(a);
  return b;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
