/**
 * Masks of free-text states (a frame with guardBytes on top: tool-guided
 * "auto" text, reasoning, text avoiding markers) without walking the trie.
 * Only a guard byte can end free text, so every token without one is allowed;
 * only the tokens holding a guard byte (a few percent of a vocabulary) are run
 * through the automaton. At 150k tokens that is well under a millisecond,
 * where a walk of a state that allows nearly everything visits the whole trie.
 */
import { advance, type Stack } from './automaton.js';
import type { Vocabulary } from './vocabulary.js';

interface Tables {
  /** Every token that has bytes. */
  readonly textTokens: Uint32Array;
  /** Per guard set (its bytes, as a key): the tokens whose bytes hold one of them. Grammars of one format share a set. */
  readonly candidates: Map<string, Int32Array>;
}

const tablesByVocabulary = new WeakMap<Vocabulary, Tables>();

function tablesOf(vocab: Vocabulary): Tables {
  let tables = tablesByVocabulary.get(vocab);
  if (tables === undefined) {
    const textTokens = new Uint32Array((vocab.size + 31) >>> 5);
    for (let token = 0; token < vocab.size; token++) {
      const bytes = vocab.tokenBytes[token];
      if (bytes && bytes.length > 0) textTokens[token >>> 5]! |= 1 << (token & 31);
    }
    tables = { textTokens, candidates: new Map() };
    tablesByVocabulary.set(vocab, tables);
  }
  return tables;
}

function candidatesOf(vocab: Vocabulary, tables: Tables, guard: Uint8Array): Int32Array {
  const key = guard.join('');
  let found = tables.candidates.get(key);
  if (found === undefined) {
    const ids: number[] = [];
    for (let token = 0; token < vocab.size; token++) {
      const bytes = vocab.tokenBytes[token];
      if (!bytes) continue;
      for (let i = 0; i < bytes.length; i++) {
        if (guard[bytes[i]!] === 1) {
          ids.push(token);
          break;
        }
      }
    }
    found = Int32Array.from(ids);
    tables.candidates.set(key, found);
  }
  return found;
}

/** Sets in `mask` exactly the text tokens the grammar accepts from `stack`, whose top frame has `guard` as its guard bytes. */
export function fillFreeTextMask(vocab: Vocabulary, stack: Stack, guard: Uint8Array, mask: Uint32Array): void {
  const tables = tablesOf(vocab);
  mask.set(tables.textTokens);
  const candidates = candidatesOf(vocab, tables, guard);
  for (let c = 0; c < candidates.length; c++) {
    const token = candidates[c]!;
    const bytes = vocab.tokenBytes[token]!;
    let s: Stack | null = stack;
    for (let i = 0; i < bytes.length && s !== null; i++) s = advance(s, bytes[i]!);
    if (s === null) mask[token >>> 5]! &= ~(1 << (token & 31));
  }
}
