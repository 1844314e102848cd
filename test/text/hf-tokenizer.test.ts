import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TokenizerError } from '../../src/errors.js';
import { HfTokenizer } from '../../src/text/hf-tokenizer.js';
import { loadText } from '../../src/text/load-text.js';
import { haveSharedModels, modelDir } from './shared-models.js';

interface TokenizerCase {
  label: string;
  text: string;
  ids: number[];
}
interface Divergence {
  label: string;
  text: string;
  tokenizer_json_ids: number[];
}

const readJson = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));

for (const model of ['stories260K', 'aidreams260K']) {
  describe.skipIf(!haveSharedModels)(`HfTokenizer on ${model}`, async () => {
    const dir = modelDir(model);
    const tests = haveSharedModels ? readJson(`${dir}/tokenizer_tests.json`) : { cases: [], known_divergences: [] };
    const reference = haveSharedModels ? readJson(`${dir}/reference.json`) : { cases: [] };
    const { tokenizer } = haveSharedModels ? await loadText(dir) : ({} as any);

    it('has the vocabulary, BOS and EOS the model card lists', () => {
      expect(tokenizer.vocabSize).toBe(reference.vocab_size);
      expect(tokenizer.bosTokenId).toBe(reference.bos_token_id);
      expect(tokenizer.eosTokenIds).toEqual([reference.eos_token_id]);
      expect(tokenizer.tokenToId('<s>')).toBe(1);
      expect(tokenizer.idToToken(2)).toBe('</s>');
      expect(tokenizer.idToToken(3)).toBe('<0x00>');
      expect(tokenizer.idToToken(512)).toBeUndefined();
      expect(tokenizer.idToToken(-1)).toBeUndefined();
      expect(tokenizer.idToToken(1.5)).toBeUndefined();
      expect(tokenizer.tokenToId('no such piece')).toBeUndefined();
    });

    it.each(tests.cases as TokenizerCase[])('encodes and decodes "$label" like llama2.c', ({ text, ids }) => {
      expect(tokenizer.encode(text, { addSpecialTokens: false })).toEqual(ids);
      expect(tokenizer.encode(text)).toEqual([1, ...ids]);
      expect(tokenizer.decode([1, ...ids])).toBe(text);
      expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe(text);
    });

    it.each(tests.known_divergences as Divergence[])(
      'follows tokenizer.json on the known divergence "$label"',
      ({ text, tokenizer_json_ids }) => {
        expect(tokenizer.encode(text, { addSpecialTokens: false })).toEqual(tokenizer_json_ids);
      },
    );

    it.each(reference.cases as { prompt: string; prompt_ids: number[] }[])(
      'adds BOS as reference.json\'s prompt_ids for "$prompt"',
      ({ prompt, prompt_ids }) => {
        expect(tokenizer.encode(prompt)).toEqual(prompt_ids);
      },
    );

    it('keeps special tokens in decode only when asked', () => {
      const ids = tokenizer.encode('Once upon a time');
      expect(tokenizer.decode([...ids, 2], { skipSpecialTokens: false })).toContain('</s>');
      expect(tokenizer.decode([...ids, 2], { skipSpecialTokens: false })).toContain('<s>');
      expect(tokenizer.decode([...ids, 2])).toBe('Once upon a time');
    });

    it('decodes nothing to "" and drops ids outside the vocabulary', () => {
      expect(tokenizer.decode([])).toBe('');
      expect(tokenizer.decode([1, 2])).toBe('');
      const ids = tokenizer.encode('Lily and Ben', { addSpecialTokens: false });
      expect(tokenizer.decode([...ids, 9999, -3])).toBe('Lily and Ben');
    });
  });
}

describe.skipIf(!haveSharedModels)('HfTokenizer special-token rules from tokenizer_config.json', () => {
  const dir = modelDir('stories260K');
  const tokenizerJson = haveSharedModels ? readJson(`${dir}/tokenizer.json`) : {};
  const baseConfig = haveSharedModels ? readJson(`${dir}/tokenizer_config.json`) : {};
  const make = (config: Record<string, unknown>, extraEosTokenIds?: number[]) =>
    new HfTokenizer({ tokenizerJson: structuredClone(tokenizerJson), tokenizerConfig: config, extraEosTokenIds });
  const plain = [403, 407, 261, 378]; // "Once upon a time" without specials

  it('add_bos_token false drops the BOS the post-processor would add', () => {
    expect(make({ ...baseConfig, add_bos_token: false }).encode('Once upon a time')).toEqual(plain);
  });

  it('add_eos_token true appends EOS', () => {
    expect(make({ ...baseConfig, add_eos_token: true }).encode('Once upon a time')).toEqual([1, ...plain, 2]);
  });

  it('without the flags, tokenizer.json\'s post-processor decides (here: BOS)', () => {
    const config = { ...baseConfig };
    delete config.add_bos_token;
    delete config.add_eos_token;
    expect(make(config).encode('Once upon a time')).toEqual([1, ...plain]);
    expect(make(config).encode('Once upon a time', { addSpecialTokens: false })).toEqual(plain);
  });

  it('accepts bos_token / eos_token written as AddedToken objects', () => {
    const tokenizer = make({
      ...baseConfig,
      bos_token: { content: '<s>', lstrip: false, rstrip: false, special: true },
      eos_token: { __type: 'AddedToken', content: '</s>', special: true },
      add_eos_token: true,
    });
    expect(tokenizer.bosTokenId).toBe(1);
    expect(tokenizer.encode('Once upon a time')).toEqual([1, ...plain, 2]);
  });

  it('merges generation_config eos ids with the tokenizer EOS, without duplicates', () => {
    expect(make(baseConfig, [2, 1]).eosTokenIds).toEqual([2, 1]);
    expect(make(baseConfig, [7]).eosTokenIds).toEqual([2, 7]);
  });

  it('rejects a BOS it must add but cannot find', () => {
    expect(() => make({ ...baseConfig, bos_token: '<bos>' })).toThrow(TokenizerError);
    // Not required (add_bos_token false): an unknown token simply has no id.
    expect(make({ ...baseConfig, bos_token: '<bos>', add_bos_token: false }).bosTokenId).toBeUndefined();
  });

  it('rejects a tokenizer.json the library cannot build', () => {
    expect(() => new HfTokenizer({ tokenizerJson: { model: { type: 'Nope' } }, tokenizerConfig: {} })).toThrow(
      TokenizerError,
    );
    expect(() => new HfTokenizer({ tokenizerJson: 42, tokenizerConfig: {} })).toThrow(TokenizerError);
  });

  it('rejects a non-string text', () => {
    expect(() => make(baseConfig).encode(undefined as unknown as string)).toThrow(TokenizerError);
  });
});
