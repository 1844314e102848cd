/**
 * Checks of the attention kernels at the head size they are tuned for
 * (head_dim 128, as Qwen3-0.6B; with and without a sliding window), shared by attention-kernels.test.ts (the
 * CPU's own kernel set) and attention-kernels-avx2.test.ts (the AVX2 set
 * forced): every position against the float64 oracle, for block sizes that
 * leave 16-position chunks partial (5), exact (16) and two to a block (32);
 * and a sequence chunked, decoded and batched with another one against its
 * solo logits (tiles of 2 rows read an f16 cache directly, tiles of 32 rows
 * widen it per block: both must give the same bits).
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { buildBatch, maxAbsDiff, row, shuffledBlocks } from './helpers.js';
import { writeRandomModel } from './random-model.js';
import { referenceForward } from './reference-forward.js';

const base = {
  hidden_size: 64, intermediate_size: 96, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 128,
  vocab_size: 80, max_position_embeddings: 128, rms_norm_eps: 1e-6,
};
const models: Array<[string, Record<string, unknown>]> = [
  ['Qwen3 (q/k norm)', { ...base, architectures: ['Qwen3ForCausalLM'], rope_parameters: { rope_type: 'default', rope_theta: 1e6 } }],
  // A window of 21: rows start mid-block and mid-chunk.
  ['Mistral with a sliding window of 21', { ...base, architectures: ['MistralForCausalLM'], sliding_window: 21, rope_theta: 10000 }],
];

export function attentionTileChecks(expectedKernels: (kernels: string | undefined) => void): void {
  describe.each(models)('%s', (_, config) => modelChecks(config, expectedKernels));
}

function modelChecks(config: Record<string, unknown>, expectedKernels: (kernels: string | undefined) => void): void {
  const model = writeRandomModel(config, 7);
  const tokens = Array.from({ length: 75 }, (_, i) => (i * 37 + 11) % 80);
  const other = Array.from({ length: 40 }, (_, i) => (i * 13 + 5) % 80);
  const expected = referenceForward(model.config, model.weights, tokens);
  const vocab = model.config.vocabSize;
  afterAll(() => rmSync(model.dir, { recursive: true }));

  describe.each([5, 16, 32])('head_dim 128, blocks of %i', (blockSize) => {
    const blocksFor = (n: number) => Math.ceil(n / blockSize);
    const numBlocks = blocksFor(tokens.length) + blocksFor(other.length) + 1;

    it.each(['f32', 'f16'] as const)('every position of a 75-token prompt matches the float64 oracle (%s KV)', async (precision) => {
      const backend = await CpuBackend.load(model.dir, { threads: 2 });
      try {
        expectedKernels(backend.kernels);
        await backend.allocateCache({ numBlocks, blockSize, precision });
        const blocks = shuffledBlocks(1, numBlocks, blockSize).slice(0, blocksFor(tokens.length));
        const out = await backend.execute(buildBatch([{ tokens, pastLen: 0, blocks, logits: 'all' }]));
        const tolerance = precision === 'f32' ? 1e-4 : 2e-2;
        tokens.forEach((_, p) => {
          expect(maxAbsDiff(row(out.logits, p, vocab), expected[p] as Float64Array), `position ${p}`).toBeLessThan(tolerance);
        });
      } finally {
        await backend.dispose();
      }
    });

    it.each(['f32', 'f16'] as const)('chunks, decode steps and a neighbour in the batch give the solo logits bit for bit (%s KV)', async (precision) => {
      const backend = await CpuBackend.load(model.dir, { threads: 2 });
      try {
        await backend.allocateCache({ numBlocks, blockSize, precision });
        const pool = shuffledBlocks(1, numBlocks, 3 * blockSize);
        const mine = pool.slice(0, blocksFor(tokens.length)), theirs = pool.slice(blocksFor(tokens.length));
        const solo = await backend.execute(buildBatch([{ tokens, pastLen: 0, blocks: mine, logits: 'all' }]));
        // The same sequence again: prefill in chunks of 23 (tiles of 16 and 7 tokens) next to the
        // other sequence, then one token per step (tiles of 2 rows), the other one decoding alongside.
        let past = 0, otherPast = 0;
        while (past < tokens.length) {
          const n = past < 46 ? 23 : 1;
          const chunk = tokens.slice(past, past + n);
          const otherChunk = other.slice(otherPast, otherPast + (otherPast < 30 ? 10 : 1));
          const seqs = [{ tokens: chunk, pastLen: past, blocks: mine, logits: 'all' as const }];
          if (otherChunk.length > 0) seqs.unshift({ tokens: otherChunk, pastLen: otherPast, blocks: theirs, logits: 'all' as const });
          const out = await backend.execute(buildBatch(seqs));
          const first = otherChunk.length > 0 ? otherChunk.length : 0;
          chunk.forEach((_, i) => {
            const got = row(out.logits, first + i, vocab), want = row(solo.logits, past + i, vocab);
            expect(maxAbsDiff(got, want), `position ${past + i}`).toBe(0);
          });
          past += chunk.length;
          otherPast += otherChunk.length;
        }
      } finally {
        await backend.dispose();
      }
    });
  });
}
