/**
 * Issue 9 item 8: 64 requests sampling at temperature / top-p over Qwen's
 * 151,936-token vocabulary (a random-weight model, tiny otherwise) must not
 * hold the event loop: 10 ms timers keep firing, and a request on another
 * pipeline finishes while they run. Before: about 4 s (up to 20 s on a loaded
 * machine) of blocked loop per step.
 */

import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/cpu-backend.js';
import { Pipeline } from '../../src/create.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { harness } from '../support/harness.js';
import { writeRandomModel } from '../native/random-model.js';

const VOCAB = 151_936;
const model = writeRandomModel(
  {
    architectures: ['Qwen3ForCausalLM'], hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1, num_attention_heads: 2,
    num_key_value_heads: 1, head_dim: 8, vocab_size: VOCAB, max_position_embeddings: 256, rms_norm_eps: 1e-6, tie_word_embeddings: true,
    rope_parameters: { rope_type: 'default', rope_theta: 1e6 },
  },
  9,
);
afterAll(() => rmSync(model.dir, { recursive: true }));

// Generous for a shared 2-core machine; one un-yielding step of 64 draws is seconds.
const MAX_GAP_MS = 400;

describe('sampling at a real vocabulary keeps the event loop responsive', () => {
  it('timers fire and another pipeline progresses while 64 requests sample at T=0.9, top-p 0.95', async () => {
    const backend = await CpuBackend.load(model.dir, { threads: 1 });
    const big = await Pipeline.create({ backend, tokenizer: new ByteTokenizer(), kvCache: { size: '16MiB', blockSize: 16 } });
    const other = await harness();
    try {
      let last = performance.now();
      let maxGapMs = 0;
      const ticker = setInterval(() => {
        const now = performance.now();
        maxGapMs = Math.max(maxGapMs, now - last);
        last = now;
      }, 10);
      let bigDone = false;
      const requests = Array.from({ length: 64 }, (_, i) =>
        big.generate('hello there', { maxTokens: 3, temperature: 0.9, topP: 0.95, seed: i, ignoreEos: true }),
      );
      const all = Promise.all(requests).then((results) => ((bigDone = true), results));
      // Start the other request once the big batch is sampling.
      await new Promise<void>((resolve) => big.once('step', () => resolve()));
      const otherResult = await other.pipe.generate('abc', { maxTokens: 8, temperature: 0 });
      const otherFinishedFirst = !bigDone;
      const results = await all;
      clearInterval(ticker);
      expect(results.every((r) => r.tokenIds.length === 3 && r.tokenIds.every((id) => id >= 0 && id < VOCAB))).toBe(true);
      expect(otherResult.tokenIds).toEqual(other.expected('abc', 8));
      expect(otherFinishedFirst).toBe(true);
      expect(maxGapMs).toBeLessThan(MAX_GAP_MS);
    } finally {
      await other.pipe.close();
      await big.close();
    }
  });
});
