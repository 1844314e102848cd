/**
 * The context-independent part of a mask (xgrammar's idea): in a free string
 * or free text nearly every token is allowed whatever came before, so walking
 * the whole trie for a state seen the first time (hundreds of ms at 150k
 * tokens) wastes its time re-proving that. A frame that can promise it names
 * a token class it consumes whole by itself; the vocabulary sorts its tokens
 * into that class once (a bitset per budget) and a trie of the others, and the
 * mask is the class's bitset OR a walk of only the others.
 *
 * Invariant (what makes the mask exact): when a frame's `freeRun()` returns
 * { tokens, budget }, it is the top of the stack and, for every token whose
 * bytes have `tokens.units(bytes) = u >= 0`, it reads every byte itself (never
 * popping, pushing or finishing) and accepts the token if and only if
 * u <= budget. Tokens with units -1 are walked as before.
 */
import { TokenTrie } from './token-trie.js';

/** A set of token byte strings, with a count of units (characters) each; named by `key` across grammars. */
export interface TokenClass {
  readonly key: string;
  /** The token's units when it is in the class, else -1. */
  units(bytes: Uint8Array): number;
}

export interface FreeRun {
  readonly tokens: TokenClass;
  /** How many units the frame may still read (Infinity: no bound). */
  readonly budget: number;
}

/** Tokens without any of `bytes` (free text that can only end or fail on one of them), 0 units each. */
export function tokensWithout(bytes: Uint8Array): TokenClass {
  const banned = new Uint8Array(256);
  for (const b of bytes) banned[b] = 1;
  return {
    key: `without:${[...new Set(bytes)].sort((a, b) => a - b).join(',')}`,
    units: (token) => {
      for (let i = 0; i < token.length; i++) if (banned[token[i]!] === 1) return -1;
      return 0;
    },
  };
}

/** Free text that only a guard byte (flags, by value, as Frame.guardBytes) can end: any token without one, no bound. */
export function freeTextRun(guardBytes: Uint8Array): FreeRun {
  const bytes: number[] = [];
  guardBytes.forEach((flag, byte) => flag === 1 && bytes.push(byte));
  return { tokens: tokensWithout(Uint8Array.from(bytes)), budget: Infinity };
}

/** One class's tokens sorted once per vocabulary. */
export class FreeRunIndex {
  /** Tokens not in the class: the ones a mask still walks. */
  readonly rest: TokenTrie;
  private readonly units: Int32Array;
  private readonly maxUnits: number;
  private readonly withinBudget = new Map<number, Uint32Array>();

  constructor(
    tokenBytes: readonly (Uint8Array | null)[],
    readonly size: number,
    tokens: TokenClass,
  ) {
    this.units = new Int32Array(size).fill(-1);
    const rest: number[] = [];
    let maxUnits = 0;
    for (let id = 0; id < tokenBytes.length && id < size; id++) {
      const bytes = tokenBytes[id];
      if (!bytes || bytes.length === 0) continue;
      const u = tokens.units(bytes);
      this.units[id] = u;
      if (u < 0) rest.push(id);
      else if (u > maxUnits) maxUnits = u;
    }
    this.maxUnits = maxUnits;
    this.rest = new TokenTrie(tokenBytes, rest, size);
  }

  /**
   * The bitset of class tokens of at most `budget` units (shared: copy, never write it). Kept per
   * budget up to the longest token's units: at most that many + 1 bitsets of vocab/8 bytes each.
   */
  within(budget: number): Uint32Array {
    const b = Math.min(budget, this.maxUnits);
    let bits = this.withinBudget.get(b);
    if (bits === undefined) {
      bits = new Uint32Array((this.size + 31) >>> 5);
      const units = this.units;
      for (let id = 0; id < this.size; id++) {
        const u = units[id]!;
        if (u >= 0 && u <= b) bits[id >>> 5]! |= 1 << (id & 31);
      }
      this.withinBudget.set(b, bits);
    }
    return bits;
  }
}
