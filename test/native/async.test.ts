// A step runs off the main thread: the event loop keeps turning while it computes.
import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { buildBatch, contiguousBlocks } from './helpers.js';
import { writeRandomModel } from './random-model.js';

it('the event loop keeps running during a step', async () => {
  const model = writeRandomModel({
    architectures: ['LlamaForCausalLM'], hidden_size: 256, intermediate_size: 768, num_hidden_layers: 4,
    num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 512, max_position_embeddings: 1024,
  }, 7);
  const backend = await CpuBackend.load(model.dir, { threads: 1 });
  try {
    await backend.allocateCache({ numBlocks: 40, blockSize: 16, precision: 'f32' });
    const tokens = Array.from({ length: 600 }, (_, i) => (i * 31) % 512);
    let ticks = 0;
    let running = true;
    const tick = () => {
      ticks++;
      if (running) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const started = performance.now();
    const out = await backend.execute(buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, 38) }]));
    const elapsed = performance.now() - started;
    running = false;
    expect(out.logits.length).toBe(512);
    // A timer tick takes ~1 ms; a blocked loop would see at most one.
    expect(elapsed).toBeGreaterThan(20);
    expect(ticks).toBeGreaterThan(3);
  } finally {
    await backend.dispose();
    rmSync(model.dir, { recursive: true });
  }
});
