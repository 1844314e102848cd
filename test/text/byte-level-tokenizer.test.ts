import { describe, expect, it } from 'vitest';
import { HfTokenizer } from '../../src/text/hf-tokenizer.js';

/** GPT-2's byte -> printable character table, which byte-level BPE vocabularies are written in. */
function byteLevelAlphabet(): string[] {
  const printable = new Set<number>();
  for (let b = 33; b <= 126; b++) printable.add(b);
  for (let b = 161; b <= 172; b++) printable.add(b);
  for (let b = 174; b <= 255; b++) printable.add(b);
  const chars: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) chars.push(String.fromCodePoint(printable.has(b) ? b : 256 + extra++));
  return chars;
}

const SPECIAL = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|begin_of_text|>'];

/**
 * A small tokenizer.json in the shape Qwen and Llama 3 ship: byte-level BPE over
 * the 256 byte symbols, two merges ("h"+"i", "Ġ"+"hi"), and special added tokens.
 */
function byteLevelTokenizerJson(postProcessor: unknown = null): unknown {
  const alphabet = byteLevelAlphabet();
  const vocab: Record<string, number> = {};
  alphabet.forEach((char, id) => (vocab[char] = id));
  vocab.hi = 256;
  vocab['Ġhi'] = 257;
  return {
    version: '1.0',
    added_tokens: SPECIAL.map((content, i) => ({
      id: 258 + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true },
    post_processor: postProcessor,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, fuse_unk: false, byte_fallback: false, vocab, merges: ['h i', 'Ġ hi'] },
  };
}

const byte = (char: string) => byteLevelAlphabet().indexOf(char);

describe('HfTokenizer on a Qwen-style byte-level BPE', () => {
  const qwenConfig = { bos_token: null, eos_token: '<|im_end|>', pad_token: '<|endoftext|>', clean_up_tokenization_spaces: false };
  const tokenizer = new HfTokenizer({
    tokenizerJson: byteLevelTokenizerJson(),
    tokenizerConfig: qwenConfig,
    extraEosTokenIds: [260, 258],
  });

  it('has no BOS, EOS from the config first, then generation_config ids', () => {
    expect(tokenizer.bosTokenId).toBeUndefined();
    expect(tokenizer.eosTokenIds).toEqual([260, 258]);
    expect(tokenizer.vocabSize).toBe(262);
  });

  it('encodes special tokens in text as single ids and merges byte symbols', () => {
    const ids = tokenizer.encode('<|im_start|>user\nhi hi<|im_end|>');
    expect(ids).toEqual([259, ...[...'user'].map(byte), byte('Ċ'), 256, 257, 260]);
    // Nothing is added around the text: no flags in the config, no post-processor.
    expect(tokenizer.encode('hi')).toEqual([256]);
  });

  it('round-trips non-ASCII text through byte symbols', () => {
    const text = 'héllo 😀 ü';
    const ids = tokenizer.encode(text);
    expect(ids.every((id) => id < 258)).toBe(true);
    expect(tokenizer.decode(ids)).toBe(text);
  });

  it('skips special tokens in decode by default, keeps them on request', () => {
    const ids = tokenizer.encode('<|im_start|>assistant\nhi<|im_end|>');
    expect(tokenizer.decode(ids)).toBe('assistant\nhi');
    expect(tokenizer.decode(ids, { skipSpecialTokens: false })).toBe('<|im_start|>assistant\nhi<|im_end|>');
  });

  it('does not "clean up" spaces before punctuation', () => {
    expect(tokenizer.decode(tokenizer.encode('a , b .'))).toBe('a , b .');
  });
});

describe('HfTokenizer on a Llama 3-style post-processor', () => {
  const template = {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [],
    special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [261], tokens: ['<|begin_of_text|>'] } },
  };
  const config = { bos_token: '<|begin_of_text|>', eos_token: '<|endoftext|>' };

  it('lets the post-processor add BOS when the config has no add_bos_token', () => {
    const tokenizer = new HfTokenizer({ tokenizerJson: byteLevelTokenizerJson(template), tokenizerConfig: config });
    expect(tokenizer.bosTokenId).toBe(261);
    expect(tokenizer.encode('hi')).toEqual([261, 256]);
    expect(tokenizer.encode('hi', { addSpecialTokens: false })).toEqual([256]);
    expect(tokenizer.decode([261, 256])).toBe('hi');
  });

  it('add_bos_token: false in the config overrides the post-processor', () => {
    const tokenizer = new HfTokenizer({
      tokenizerJson: byteLevelTokenizerJson(template),
      tokenizerConfig: { ...config, add_bos_token: false },
    });
    expect(tokenizer.encode('hi')).toEqual([256]);
  });
});
