// The CPU backend against reference outputs from transformers / llama2.c:
// first-position logits and greedy continuations, token for token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { contiguousBlocks, greedySolo, maxAbsDiff, readReference, referenceModels } from './helpers.js';

for (const { name, dir } of referenceModels()) {
  const reference = readReference(dir);
  const longest = Math.max(...reference.cases.map((c) => c.prompt_ids.length + c.greedy_ids.length));

  describe.each(['f32', 'f16'] as const)(`${name} with %s KV cache`, (precision) => {
    const blockSize = 16;
    const blocks = contiguousBlocks(1, Math.ceil(longest / blockSize));
    let backend: CpuBackend;
    beforeAll(async () => {
      backend = await CpuBackend.load(dir, { threads: 2 });
      await backend.allocateCache({ numBlocks: blocks.length + 1, blockSize, precision });
    });
    afterAll(async () => backend.dispose());

    it.each(reference.cases.map((c, i) => [i, c] as const))('case %i: logits and greedy ids match the reference', async (_, c) => {
      const { ids, firstLogits } = await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, blocks);
      expect(firstLogits.length).toBe(reference.vocab_size);
      // f32 must match transformers to 1e-4; f16 KV rounds keys/values, so only loosely.
      expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(precision === 'f32' ? 1e-4 : 2e-2);
      expect(ids).toEqual(c.greedy_ids);
    });
  });
}
