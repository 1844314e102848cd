/** Tokenizers rebuilt from tokenizer.ggml.* on hand-made vocabularies, checked by hand. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TokenizerError, UnsupportedModelError } from '../../src/index.js';
import { readGgufFile } from '../../src/model-files/gguf/reader.js';
import { ggufTextAssets } from '../../src/text/gguf-tokenizer.js';
import { encodeGguf, meta, type MetaValue } from '../support/gguf-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-gguf-tok-'));
let counter = 0;
function assets(metadata: Array<[string, MetaValue]>) {
  const file = join(dir, `t${counter++}.gguf`);
  writeFileSync(file, encodeGguf({ metadata, tensors: [] }));
  return ggufTextAssets(readGgufFile(file));
}

/** GPT-2's byte -> printable character map. */
function byteChars(): string[] {
  const printable = [...Array(256).keys()].filter((b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255));
  const map: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) map[b] = printable.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  return map;
}

describe('gpt2 (byte-level BPE) from GGUF', () => {
  const bytes = byteChars();
  const merges = ['h e', 'l l', 'he ll', 'Ġ w', 'o r', 'Ġw or', 'Ġwor l', 'Ġworl d'];
  const tokens = [...bytes, ...merges.map((m) => m.replace(' ', '')), '<|endoftext|>', '<|im_end|>', '<tool>'];
  const types = [...tokens.map(() => 1)];
  types[tokens.indexOf('<|endoftext|>')] = 3;
  types[tokens.indexOf('<|im_end|>')] = 3;
  types[tokens.indexOf('<tool>')] = 4;
  const id = (t: string) => tokens.indexOf(t);
  const base: Array<[string, MetaValue]> = [
    ['tokenizer.ggml.model', meta.str('gpt2')],
    ['tokenizer.ggml.pre', meta.str('qwen2')],
    ['tokenizer.ggml.tokens', meta.strings(tokens)],
    ['tokenizer.ggml.token_type', meta.i32s(types)],
    ['tokenizer.ggml.merges', meta.strings(merges)],
    ['tokenizer.ggml.eos_token_id', meta.u32(id('<|im_end|>'))],
    ['tokenizer.ggml.eot_token_id', meta.u32(id('<|endoftext|>'))],
    ['tokenizer.chat_template', meta.str("{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ eos_token }}{% endfor %}")],
  ];

  it('encodes with the merges in rank order, splits special and user-defined tokens, decodes bytes back', () => {
    const { tokenizer } = assets(base);
    expect(tokenizer.encode('hello world')).toEqual([id('hell'), id('o'), id('Ġworld')]);
    expect(tokenizer.encode('hello<|im_end|> w<tool>')).toEqual([id('hell'), id('o'), id('<|im_end|>'), id('Ġw'), id('<tool>')]);
    const text = 'héllo €, 12 words\n\n';
    expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    expect(tokenizer.decode([id('hell'), id('<|im_end|>')])).toBe('hell');
    expect(tokenizer.decode([id('hell'), id('<|im_end|>')], { skipSpecialTokens: false })).toBe('hell<|im_end|>');
    expect(tokenizer.bosTokenId).toBeUndefined();
    expect(tokenizer.eosTokenIds).toEqual([id('<|im_end|>'), id('<|endoftext|>')]);
    expect(tokenizer.vocabSize).toBe(tokens.length);
  });

  it('takes the chat template and add_bos from the metadata', () => {
    const { chatTemplate, tokenizer } = assets([...base, ['tokenizer.ggml.bos_token_id', meta.u32(id('<|endoftext|>'))], ['tokenizer.ggml.add_bos_token', meta.bool(true)]]);
    expect(chatTemplate!.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: false })).toBe('<user>hi<|im_end|>');
    expect(tokenizer.encode('he')).toEqual([id('<|endoftext|>'), id('he')]);
  });

  it('refuses unknown pre-tokenizers and tokenizer models, and broken merges, with typed errors', () => {
    expect(() => assets(base.map(([k, v]) => (k === 'tokenizer.ggml.pre' ? [k, meta.str('tekken')] : [k, v])))).toThrow(UnsupportedModelError);
    expect(() => assets(base.map(([k, v]) => (k === 'tokenizer.ggml.model' ? [k, meta.str('rwkv')] : [k, v])))).toThrow(UnsupportedModelError);
    expect(() => assets(base.map(([k, v]) => (k === 'tokenizer.ggml.merges' ? [k, meta.strings(['nospace'])] : [k, v])))).toThrow(/not "left right"/);
    expect(() => assets(base.filter(([k]) => k !== 'tokenizer.ggml.model'))).toThrow(TokenizerError);
    expect(() => assets(base.map(([k, v]) => (k === 'tokenizer.ggml.eos_token_id' ? [k, meta.u32(99999)] : [k, v])))).toThrow(/not a token id/);
  });
});

describe('llama (SentencePiece) from GGUF', () => {
  // Pieces a, b, c, ab, bc, abc: "bc" outscores "ab", so "abc" pieces as a + bc, then abc.
  const tokens = ['<unk>', '<s>', '</s>', ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`), '▁', 'a', 'b', 'c', 'ab', 'bc', '▁a', 'cab'];
  const scores = tokens.map((t) => ({ ab: -3, bc: -1, '▁a': -2, cab: -0.5 } as Record<string, number>)[t] ?? -10);
  const types = tokens.map((t, i) => (i === 0 ? 2 : i < 3 ? 3 : t.startsWith('<0x') ? 6 : 1));
  const id = (t: string) => tokens.indexOf(t);
  const base: Array<[string, MetaValue]> = [
    ['tokenizer.ggml.model', meta.str('llama')],
    ['tokenizer.ggml.tokens', meta.strings(tokens)],
    ['tokenizer.ggml.scores', meta.f32s(scores)],
    ['tokenizer.ggml.token_type', meta.i32s(types)],
    ['tokenizer.ggml.bos_token_id', meta.u32(1)],
    ['tokenizer.ggml.eos_token_id', meta.u32(2)],
    ['tokenizer.ggml.unknown_token_id', meta.u32(0)],
  ];

  it('merges the highest-scoring pair first, adds BOS and the prefix space, falls back to bytes', () => {
    const { tokenizer } = assets(base);
    // "▁abc": ▁a (-2) vs ab (-3) vs bc (-1): bc first -> ▁ a bc -> ▁a bc.
    expect(tokenizer.encode('abc')).toEqual([1, id('▁a'), id('bc')]);
    // "▁cab": ca is no piece, ab (-3) -> ▁ c ab; then "cab" joins c + ab.
    expect(tokenizer.encode('cab', { addSpecialTokens: false })).toEqual([id('▁'), id('cab')]);
    // "é" is no piece: its UTF-8 bytes.
    expect(tokenizer.encode('é', { addSpecialTokens: false })).toEqual([id('▁'), id('<0xC3>'), id('<0xA9>')]);
    expect(tokenizer.decode([1, id('▁a'), id('bc'), id('▁'), id('<0xC3>'), id('<0xA9>')])).toBe('abc é');
    expect(tokenizer.eosTokenIds).toEqual([2]);
  });

  it('without add_space_prefix, no prefix space; without add_bos, no BOS', () => {
    const { tokenizer } = assets([...base, ['tokenizer.ggml.add_space_prefix', meta.bool(false)], ['tokenizer.ggml.add_bos_token', meta.bool(false)]]);
    expect(tokenizer.encode('abc')).toEqual([id('a'), id('bc')]);
  });

  it('needs one score per token', () => {
    expect(() => assets(base.map(([k, v]) => (k === 'tokenizer.ggml.scores' ? [k, meta.f32s([0])] : [k, v])))).toThrow(/one score per token/);
  });
});
