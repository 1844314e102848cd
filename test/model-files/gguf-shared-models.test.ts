/**
 * The shared models' model.gguf (llama architecture, SentencePiece vocab, q/k
 * in llama.cpp's order) through Pipeline.create({ model: 'file.gguf' }): the
 * same token ids as tokenizer.json on tokenizer_tests.json and the same greedy
 * ids and text as reference.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadModelConfig } from '../../src/model-files/config.js';
import { ggufModelConfig } from '../../src/model-files/gguf/config.js';
import { readGgufFile } from '../../src/model-files/gguf/reader.js';
import { Pipeline } from '../../src/index.js';
import { readReference, sharedModel } from '../native/helpers.js';

interface TokenizerCase { label: string; text: string; ids: number[] }

const open: Pipeline[] = [];
afterAll(async () => {
  await Promise.all(open.map((pipe) => pipe.close()));
});

for (const name of ['stories260K', 'aidreams260K']) {
  const dir = sharedModel(name);
  describe.skipIf(dir === undefined)(`${name}: model.gguf`, () => {
    const file = dir === undefined ? '' : join(dir, 'model.gguf');

    it('gives the config the safetensors folder gives', async () => {
      const fromGguf = ggufModelConfig(readGgufFile(file));
      const fromJson = await loadModelConfig(dir!);
      expect({ ...fromGguf, dtype: null, rmsNormEps: 0 }).toEqual({ ...fromJson, dtype: null, rmsNormEps: 0 });
      expect(fromGguf.rmsNormEps).toBe(Math.fround(fromJson.rmsNormEps)); // stored as float32
    });

    it('tokenizes every tokenizer_tests.json case as tokenizer.json does, and decodes back', async () => {
      const pipe = await Pipeline.create({ model: file, threads: 2 });
      open.push(pipe);
      const cases = (JSON.parse(readFileSync(join(dir!, 'tokenizer_tests.json'), 'utf8')) as { cases: TokenizerCase[] }).cases;
      expect(cases.length).toBeGreaterThan(10);
      for (const c of cases) {
        expect(pipe.tokenizer.encode(c.text, { addSpecialTokens: false }), c.label).toEqual(c.ids);
        expect(pipe.tokenizer.encode(c.text), c.label).toEqual([1, ...c.ids]);
        expect(pipe.tokenizer.decode([1, ...c.ids]), c.label).toBe(c.text);
      }
      expect(pipe.tokenizer.bosTokenId).toBe(1);
      expect(pipe.tokenizer.eosTokenIds).toEqual([2]);
    });

    it('reproduces the reference greedy continuations and text', async () => {
      const pipe = await Pipeline.create({ model: file, threads: 2 });
      open.push(pipe);
      for (const c of readReference(dir!).cases) {
        expect(pipe.tokenizer.encode(c.prompt)).toEqual(c.prompt_ids);
        const result = await pipe.generate(c.prompt, { maxTokens: c.greedy_ids.length, temperature: 0, ignoreEos: true });
        expect(result.tokenIds).toEqual(c.greedy_ids);
        expect(result.text).toBe((c as unknown as { text: string }).text);
      }
    });
  });
}
