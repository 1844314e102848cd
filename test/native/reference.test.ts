// The CPU backend against reference outputs from transformers / llama2.c:
// first-position logits and greedy continuations, token for token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { contiguousBlocks, greedySolo, maxAbsDiff, readReference, referenceModels } from './helpers.js';

for (const { name, dir } of referenceModels()) {
  const reference = readReference(dir);
  const longest = Math.max(...reference.cases.map((c) => c.prompt_ids.length + c.greedy_ids.length));

  describe.each(['f32', 'f16', 'u8'] as const)(`${name} with %s KV cache`, (precision) => {
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
      // f32 must match transformers to 1e-4. f16 rounds cached keys/values (same greedy ids on
      // these models); u8 quantises them to 8 bits per value, so only the start must agree.
      const tolerance = { f32: 1e-4, f16: 2e-2, u8: 0.5 }[precision];
      expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(tolerance);
      if (precision === 'u8') expect(ids.slice(0, 8)).toEqual(c.greedy_ids.slice(0, 8));
      else expect(ids).toEqual(c.greedy_ids);
    });
  });
}
