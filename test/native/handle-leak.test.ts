// Every native call settles the one promise it makes: an unsettled Deferred is a
// V8 global handle that is never freed (an 8-minute soak once grew RSS by 100 MB).
import { rmSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { buildBatch, contiguousBlocks } from './helpers.js';
import { writeRandomModel } from './random-model.js';

it('steps, failed steps and rejected calls leave no global handles behind', async () => {
  const model = writeRandomModel({
    architectures: ['LlamaForCausalLM'], hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,
    num_attention_heads: 2, num_key_value_heads: 1, vocab_size: 32, max_position_embeddings: 64,
  }, 3);
  const backend = await CpuBackend.load(model.dir, { threads: 1 });
  try {
    await backend.allocateCache({ numBlocks: 4, blockSize: 16, precision: 'f32' });
    const good = buildBatch([{ tokens: [1], pastLen: 0, blocks: contiguousBlocks(1, 1) }]);
    const bad = { ...good, inputIds: Int32Array.of(99) }; // outside the vocabulary: the native check rejects
    const round = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        // Released as the engine does: lent logits hold a weak handle until released or collected.
        backend.release(await backend.execute(good));
        await expect(backend.execute(bad)).rejects.toThrow();
      }
    };
    await round(200); // warm up: lazily created handles settle in
    const before = getHeapStatistics().used_global_handles_size;
    await round(2000);
    const grown = getHeapStatistics().used_global_handles_size - before;
    // A leaked Deferred per call would add 4000 handles (tens of kilobytes).
    expect(grown).toBeLessThan(4096);
  } finally {
    await backend.dispose();
    rmSync(model.dir, { recursive: true });
  }
});
