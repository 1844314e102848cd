/**
 * The token-level grammar every guided request uses: a compiled grammar (a
 * character automaton's start, shared by every request with the same schema
 * or tool set) walked over a vocabulary, one matcher per request.
 */
import { advance, canEnd, isComplete, stackKey, type Stack } from './automaton.js';
import type { TokenTrie } from './token-trie.js';
import type { Vocabulary } from './vocabulary.js';

/** What the engine asks of a request's grammar. */
export interface TokenGrammar {
  /** Advances by one sampled token; false (and no change) if the grammar rejects it. */
  acceptToken(token: number): boolean;
  /** Sets bit t of `mask` (32 tokens per word) for every token t allowed next; false if none is. */
  fillMask(mask: Uint32Array): boolean;
  /** Forgets the last `n` accepted tokens. */
  rollback(n: number): void;
  /** Whether nothing more may be generated: the grammar is complete, or an end token was accepted. */
  isTerminated(): boolean;
  /**
   * Whether the next token is read by free text (a frame with guardBytes): nearly every token is
   * allowed there, so the engine samples first and asks `allows`, filling the mask only if not.
   */
  isFreeText(): boolean;
  /** Whether `token` may come next (nothing changes). */
  allows(token: number): boolean;
}

/** What a request spec carries: a grammar that makes one matcher per request. */
export interface GrammarSource {
  /**
   * `endTokenIds`: the tokens that end the request (EOS unless ignored, stop token ids); allowed where the grammar may end.
   * `keepsSpecialText`: the request's text keeps special tokens' text (skipSpecialTokens false), which free text then reads.
   */
  matcher(endTokenIds: readonly number[], keepsSpecialText?: boolean): TokenGrammar;
}

/** Masks kept per compiled grammar (each is vocab/8 bytes: 19 KB at 150k tokens). */
const MASK_CACHE_LIMIT = 512;

export class CompiledGrammar implements GrammarSource {
  private readonly masks = new Map<string, Uint32Array>();
  /** Grammar states whose masks were walked, and those served from the cache. */
  walks = 0;
  hits = 0;
  /** Time spent walking the trie for uncached masks, in milliseconds. */
  walkMs = 0;

  /** Tokens without bytes (special ones, ids the tokenizer lacks): only free text takes them. */
  private textless: Int32Array | undefined;

  /** `specialText`: the text of special tokens that have one (what the reply shows when it keeps them). */
  constructor(
    readonly vocabulary: Vocabulary,
    readonly start: Stack,
    readonly specialText: ReadonlyMap<number, Uint8Array> = new Map(),
  ) {}

  get textlessTokens(): Int32Array {
    if (this.textless === undefined) {
      const ids: number[] = [];
      for (let token = 0; token < this.vocabulary.size; token++) if (!this.vocabulary.tokenBytes[token]) ids.push(token);
      this.textless = Int32Array.from(ids);
    }
    return this.textless;
  }

  get maskWords(): number {
    return (this.vocabulary.size + 31) >>> 5;
  }

  /** The mask of text tokens for `stack` (end tokens not included), cached by the state's key. */
  maskOf(stack: Stack): Uint32Array {
    const key = stackKey(stack);
    const cached = this.masks.get(key);
    if (cached !== undefined) {
      this.hits++;
      return cached;
    }
    this.walks++;
    const started = performance.now();
    const mask = new Uint32Array(this.maskWords);
    const run = stack.frame.freeRun();
    if (run === undefined) walkTrie(this.vocabulary.trie, stack, mask);
    else {
      // The class's tokens are allowed by the invariant in free-runs.ts; only the others are walked.
      const index = this.vocabulary.freeRunIndex(run.tokens);
      mask.set(index.within(run.budget));
      walkTrie(index.rest, stack, mask);
    }
    this.walkMs += performance.now() - started;
    if (this.masks.size >= MASK_CACHE_LIMIT) this.masks.delete(this.masks.keys().next().value!);
    this.masks.set(key, mask);
    return mask;
  }

  matcher(endTokenIds: readonly number[], keepsSpecialText = false): GrammarMatcher {
    return new GrammarMatcher(this, endTokenIds, keepsSpecialText);
  }
}

/**
 * Sets the bit of every token of `trie` that `stack` accepts. Depth-first: a
 * node's subtree is skipped as soon as its prefix is rejected. Inside strings
 * and free text the automaton returns the same stack for most bytes, so the
 * walk allocates almost nothing.
 */
export function walkTrie(trie: TokenTrie, stack: Stack, mask: Uint32Array): void {
  const { firstChild, nextSibling, byteOf, tokenAt, sameBytes } = trie;
  const visit = (node: number, state: Stack): void => {
    for (let child = firstChild[node]!; child !== -1; child = nextSibling[child]!) {
      const next = advance(state, byteOf[child]!);
      if (next === null) continue;
      for (let token = tokenAt[child]!; token !== -1; token = sameBytes[token]!) mask[token >>> 5]! |= 1 << (token & 31);
      if (firstChild[child] !== -1) visit(child, next);
    }
  };
  visit(0, stack);
}

export class GrammarMatcher implements TokenGrammar {
  /** The state after each accepted token; [0] is the start. */
  private readonly states: Stack[];
  /** How many accepted tokens were end tokens (at most one, the last). */
  private ended = false;
  private readonly endTokens: ReadonlySet<number>;

  constructor(
    readonly grammar: CompiledGrammar,
    endTokenIds: readonly number[],
    private readonly keepsSpecialText = false,
  ) {
    this.states = [grammar.start];
    this.endTokens = new Set(endTokenIds);
  }

  private get state(): Stack {
    return this.states[this.states.length - 1]!;
  }

  acceptToken(token: number): boolean {
    if (this.ended) return false;
    if (this.endTokens.has(token)) {
      if (!canEnd(this.state)) return false;
      this.states.push(this.state);
      this.ended = true;
      return true;
    }
    const s = this.stateAfter(token);
    if (s === null) return false;
    this.states.push(s);
    return true;
  }

  /** The state after a token that is not an end token, or null if the grammar rejects it. */
  private stateAfter(token: number): Stack | null {
    const state = this.state;
    let bytes = this.grammar.vocabulary.tokenBytes[token];
    if (!bytes) {
      // A token without bytes adds a special token's text when the reply keeps it (read as that
      // text, wherever the grammar takes it: a marker that is a special token), else nothing,
      // which only free text takes.
      if (token < 0 || token >= this.grammar.vocabulary.size) return null;
      bytes = this.keepsSpecialText ? this.grammar.specialText.get(token) : undefined;
      if (bytes === undefined) return state.frame.guardBytes === null ? null : state;
    }
    let s: Stack | null = state;
    for (let i = 0; i < bytes.length && s !== null; i++) s = advance(s, bytes[i]!);
    return s;
  }

  /** The automaton's state after the tokens accepted so far. */
  get currentState(): Stack {
    return this.state;
  }

  /** Whether the grammar may end here (an end token would be allowed). */
  mayEnd(): boolean {
    return !this.ended && canEnd(this.state);
  }

  isFreeText(): boolean {
    return !this.ended && this.state.frame.guardBytes !== null;
  }

  allows(token: number): boolean {
    if (this.ended) return false;
    if (this.endTokens.has(token)) return canEnd(this.state);
    return this.stateAfter(token) !== null;
  }

  fillMask(mask: Uint32Array): boolean {
    if (this.ended) {
      mask.fill(0);
      return false;
    }
    const state = this.state;
    mask.set(this.grammar.maskOf(state));
    // Tokens without bytes are not in the trie: free text may take any; elsewhere only special tokens whose text the grammar takes.
    const candidates = state.frame.guardBytes !== null ? this.grammar.textlessTokens : this.keepsSpecialText ? this.grammar.specialText.keys() : [];
    for (const token of candidates) {
      if (!this.endTokens.has(token) && this.stateAfter(token) !== null) mask[token >>> 5]! |= 1 << (token & 31);
    }
    if (canEnd(state)) for (const token of this.endTokens) if (token < this.grammar.vocabulary.size) mask[token >>> 5]! |= 1 << (token & 31);
    for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) return true;
    return false;
  }

  rollback(n: number): void {
    const keep = Math.max(1, this.states.length - n);
    if (keep < this.states.length) this.ended = false;
    this.states.length = keep;
  }

  isTerminated(): boolean {
    return this.ended || isComplete(this.state);
  }
}

/**
 * Sets every token that `mask` forbids to -Infinity in logits[offset .. offset + vocab).
 * Whole words of allowed tokens are skipped, so a permissive mask costs little.
 */
export function applyMask(logits: Float32Array, offset: number, vocab: number, mask: Uint32Array): void {
  // Runs of all-refused words are filled with one call: a fill per 32 logits cost ~20 ns of call
  // overhead each, most of a restrictive state's mask at 150k tokens.
  let refusedFrom = -1;
  for (let w = 0; w < mask.length; w++) {
    const word = mask[w]!;
    if (word === 0) {
      if (refusedFrom < 0) refusedFrom = w << 5;
      continue;
    }
    if (refusedFrom >= 0) {
      logits.fill(-Infinity, offset + refusedFrom, offset + (w << 5));
      refusedFrom = -1;
    }
    if (word === 0xffffffff) continue;
    const base = w << 5;
    const end = Math.min(32, vocab - base);
    for (let b = 0; b < end; b++) if ((word & (1 << b)) === 0) logits[offset + base + b] = -Infinity;
  }
  if (refusedFrom >= 0) logits.fill(-Infinity, offset + refusedFrom, offset + Math.min(vocab, mask.length << 5));
}
