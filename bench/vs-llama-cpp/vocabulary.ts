/**
 * A deterministic byte-level BPE vocabulary in GGUF's gpt2 form (tokens,
 * token types, merges), Qwen3-sized by default: 256 byte tokens + 151,387
 * merges = 151,643 regular tokens, 22 control tokens (<|endoftext|>,
 * <|im_start|>, <|im_end|>, <think>, ...), padded with unused [PADn] to
 * 151,936 rows, as llama.cpp's converter pads Qwen vocabularies.
 *
 * No download: the merges spell out pseudo-words built from syllables by a
 * seeded generator, each word's prefixes merging one character at a time
 * (so every merge joins two existing tokens, as BPE requires). Word starts
 * carry GPT-2's "Ġ" (a space) most of the time, as real vocabularies do.
 */

/** GPT-2's byte -> printable character map (the byte-level alphabet). */
export function byteAlphabet(): string[] {
  const printable = new Set<number>();
  for (let b = 33; b <= 126; b++) printable.add(b);
  for (let b = 161; b <= 172; b++) printable.add(b);
  for (let b = 174; b <= 255; b++) printable.add(b);
  const map: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) map[b] = printable.has(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  return map;
}

export const CONTROL_TOKENS = [
  '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|object_ref_start|>', '<|object_ref_end|>', '<|box_start|>', '<|box_end|>',
  '<|quad_start|>', '<|quad_end|>', '<|vision_start|>', '<|vision_end|>', '<|vision_pad|>', '<|image_pad|>', '<|video_pad|>',
  '<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>', '<|repo_name|>', '<|file_sep|>',
];

export interface Vocabulary {
  tokens: string[];
  /** llama.cpp token types: 1 normal, 3 control, 5 unused. */
  types: number[];
  merges: string[];
  eosId: number;
  bosId: number;
}

export function buildVocabulary(totalTokens: number, mergeCount: number, seed = 0x5eed): Vocabulary {
  const alphabet = byteAlphabet();
  const tokens = [...alphabet];
  const known = new Set(tokens);
  const merges: string[] = [];
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
  const onsets = ['', 'b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'y', 'z', 'th', 'st', 'pr', 'ch', 'sh', 'tr', 'gr', 'bl'];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'y', 'ea', 'ou', 'io', 'ai'];
  const codas = ['', '', 'n', 'r', 's', 't', 'l', 'm', 'nd', 'ng', 'st', 'ck'];
  const add = (left: string, right: string) => {
    const joined = left + right;
    if (known.has(joined)) return;
    merges.push(`${left} ${right}`);
    tokens.push(joined);
    known.add(joined);
  };
  while (merges.length < mergeCount) {
    const syllables = 1 + Math.floor(next() * next() * 5);
    let word = '';
    for (let s = 0; s < syllables; s++) {
      word += onsets[Math.floor(next() * onsets.length)]! + vowels[Math.floor(next() * vowels.length)]! + codas[Math.floor(next() * codas.length)]!;
    }
    if (next() < 0.15) word = word[0]!.toUpperCase() + word.slice(1);
    const chars = [...(next() < 0.75 ? 'Ġ' : ''), ...word];
    let prefix = chars[0]!;
    for (let k = 1; k < chars.length && merges.length < mergeCount; k++) {
      add(prefix, chars[k]!);
      prefix += chars[k]!;
    }
  }
  const regular = tokens.length;
  const types = tokens.map(() => 1);
  for (const t of CONTROL_TOKENS) {
    tokens.push(t);
    types.push(3);
  }
  while (tokens.length < totalTokens) {
    tokens.push(`[PAD${tokens.length}]`);
    types.push(5);
  }
  if (tokens.length !== totalTokens) throw new Error(`vocabulary of ${tokens.length} tokens, wanted ${totalTokens}`);
  return { tokens, types, merges, bosId: regular, eosId: regular + 2 };
}
