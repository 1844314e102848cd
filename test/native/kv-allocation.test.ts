// The KV cache is allocated without touching its pages (native/src/cpu/base/zeroed_array.h):
// a 1 GiB cache costs the process almost nothing until tokens are written, and
// what is written reads back right (the attention over it matches a small cache's).
import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { buildBatch, contiguousBlocks } from './helpers.js';
import { writeRandomModel } from './random-model.js';

it.skipIf(process.platform !== 'linux')('a 1 GiB cache adds little to RSS until written, and gives the same logits as a small one', async () => {
  const model = writeRandomModel({
    architectures: ['LlamaForCausalLM'], hidden_size: 64, intermediate_size: 96, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 64, max_position_embeddings: 256,
  }, 13);
  const big = await CpuBackend.load(model.dir, { threads: 1 });
  const small = await CpuBackend.load(model.dir, { threads: 1 });
  try {
    // 2 layers x K,V x 2 heads x 16 slots x 16 dims x 2 bytes = 4 KiB a block.
    const blocks = 2 ** 30 / 4096;
    const before = process.memoryUsage().rss;
    await big.allocateCache({ numBlocks: blocks, blockSize: 16, precision: 'f16' });
    const grown = process.memoryUsage().rss - before;
    expect(grown).toBeLessThan(64 * 2 ** 20);
    await small.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f16' });
    const tokens = Array.from({ length: 40 }, (_, i) => (i * 7) % 64);
    // Blocks at the far end of the big cache, each on pages of its own.
    const far = [blocks - 1, blocks - 200, blocks - 4000];
    const a = await big.execute(buildBatch([{ tokens, pastLen: 0, blocks: far }]));
    const b = await small.execute(buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, 3) }]));
    expect(Array.from(a.logits)).toEqual(Array.from(b.logits));
  } finally {
    await big.dispose();
    await small.dispose();
    rmSync(model.dir, { recursive: true });
  }
});
