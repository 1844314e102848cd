// A step's logits are lent to JavaScript (native memory, no zero fill, no
// copy) and taken back on release; native/common/logits_transfer.h.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { buildBatch } from './helpers.js';
import { writeRandomModel } from './random-model.js';

const VOCAB = 1000;
const model = writeRandomModel({
  architectures: ['LlamaForCausalLM'], hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, vocab_size: VOCAB, max_position_embeddings: 256,
}, 11);
afterAll(() => rmSync(model.dir, { recursive: true }));

/** Step `k`: four sequences of one block each, k + 1 tokens each, logits of every token. */
function batch(k: number) {
  return buildBatch(
    Array.from({ length: 4 }, (_, i) => ({ tokens: Array.from({ length: k + 1 }, (_, j) => (i * 97 + j * 13 + k) % VOCAB), pastLen: 0, blocks: [i + 1], logits: 'all' as const })),
  );
}

async function open(copyLogits: boolean): Promise<CpuBackend> {
  const backend = await CpuBackend.load(model.dir, { threads: 2, copyLogits });
  await backend.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
  return backend;
}

describe('logits lent to JavaScript', () => {
  it('match the copied ones, and a released step lends its memory to the next (no new buffer)', async () => {
    const lend = await open(false);
    const copy = await open(true);
    try {
      for (let k = 0; k < 6; k++) {
        // The largest step first, then smaller and equal ones: the reused buffer holds
        // the previous step's values, which must all be overwritten.
        const b = batch([5, 0, 3, 5, 1, 2][k]!);
        const lent = await lend.execute(b);
        const copied = await copy.execute(b);
        expect(lent.logits.length).toBe(b.logitsIndices.length * VOCAB);
        expect(Array.from(lent.logits)).toEqual(Array.from(copied.logits));
        lend.release(lent);
        copy.release(copied);
        // Released: detached, so nothing can read memory the next step writes.
        expect(lent.logits.length).toBe(0);
        expect(copied.logits.length).toBe(b.logitsIndices.length * VOCAB); // a copy is the caller's to keep
      }
      expect(lend.logitsBuffers).toEqual({ allocated: 1, lent: 0 });
    } finally {
      await lend.dispose();
      await copy.dispose();
    }
  });

  it('are never reused while JavaScript holds them', async () => {
    const lend = await open(false);
    const copy = await open(true);
    try {
      const held = [];
      for (let k = 0; k < 4; k++) held.push({ lent: await lend.execute(batch(k)), copied: await copy.execute(batch(k)) });
      expect(lend.logitsBuffers).toEqual({ allocated: 4, lent: 4 });
      for (const { lent, copied } of held) expect(Array.from(lent.logits)).toEqual(Array.from(copied.logits));
      for (const { lent } of held) lend.release(lent);
      // The pool keeps two for reuse and frees the rest.
      expect(lend.logitsBuffers).toEqual({ allocated: 4, lent: 0 });
      await lend.execute(batch(0));
      expect(lend.logitsBuffers?.allocated).toBe(4);
    } finally {
      await lend.dispose();
      await copy.dispose();
    }
  });

  it('release leaves arrays it did not lend alone, and works after dispose', async () => {
    const lend = await open(false);
    const other = new Float32Array(10).fill(1);
    lend.release({ logits: other });
    expect(other.length).toBe(10);
    const result = await lend.execute(batch(1));
    await lend.dispose();
    expect(result.logits.length).toBe(4 * 2 * VOCAB); // still readable: the memory outlives the model
    expect(Number.isFinite(result.logits[0]!)).toBe(true);
    lend.release(result); // a no-op after dispose (the garbage collector frees it)
  });
});
