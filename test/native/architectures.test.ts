// Architecture features against an independent float64 forward pass: Qwen2
// q/k/v bias, o_proj bias, llama3 RoPE scaling, head_dim != hidden/heads,
// Mistral's sliding window, Qwen3 q/k norm. The oracle itself is first checked
// against transformers' reference logits.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { loadModelConfig } from '../../src/model-files/config.js';
import { readAllTensors } from '../model-files/safetensors-writer.js';
import { buildBatch, contiguousBlocks, maxAbsDiff, QWEN3_TINY, readReference, row, sharedModel, shuffledBlocks } from './helpers.js';
import { writeRandomModel } from './random-model.js';
import { referenceForward } from './reference-forward.js';

async function f64Weights(dir: string): Promise<Map<string, Float64Array>> {
  const tensors = await readAllTensors(join(dir, 'model.safetensors'));
  return new Map(tensors.map((t) => [t.name, Float64Array.from(new Float32Array(t.data.slice().buffer))]));
}

describe('the float64 oracle matches transformers', () => {
  const models = [{ name: 'qwen3-tiny', dir: QWEN3_TINY }];
  const stories = sharedModel('stories260K');
  if (stories) models.push({ name: 'stories260K', dir: stories });
  it.each(models)('$name first-position logits', async ({ dir }) => {
    const config = await loadModelConfig(dir);
    const weights = await f64Weights(dir);
    for (const c of readReference(dir).cases.slice(0, 3)) {
      const logits = referenceForward(config, weights, c.prompt_ids);
      expect(maxAbsDiff(logits[logits.length - 1] as Float64Array, c.first_logits)).toBeLessThan(1e-4);
    }
  });
});

const base = {
  hidden_size: 48, intermediate_size: 80, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
  vocab_size: 96, max_position_embeddings: 64, rms_norm_eps: 1e-6,
};
const variants: Array<[string, Record<string, unknown>]> = [
  ['Qwen2 (q/k/v bias, GQA, untied)', { ...base, architectures: ['Qwen2ForCausalLM'], rope_theta: 1e6, tie_word_embeddings: false, sliding_window: 4, use_sliding_window: false }],
  ['Llama with attention_bias, llama3 RoPE scaling, head_dim 20, tied', {
    ...base, architectures: ['LlamaForCausalLM'], head_dim: 20, attention_bias: true, tie_word_embeddings: true, rope_theta: 10000,
    rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 16 },
  }],
  ['Llama with linear RoPE scaling and no GQA (transformers 5 config)', {
    ...base, architectures: ['LlamaForCausalLM'], num_key_value_heads: 4, dtype: 'float32', rope_parameters: { rope_type: 'linear', rope_theta: 500, factor: 3 },
  }],
  ['Mistral with a sliding window of 5', { ...base, architectures: ['MistralForCausalLM'], sliding_window: 5, rope_theta: 10000, num_key_value_heads: 1 }],
  ['Qwen3 (q/k norm, head_dim 32, GQA)', { ...base, architectures: ['Qwen3ForCausalLM'], head_dim: 32, rope_parameters: { rope_type: 'default', rope_theta: 1e6 } }],
];

describe.each(variants)('%s', (_, configJson) => {
  const model = writeRandomModel(configJson, 42);
  const tokens = [3, 17, 90, 4, 4, 55, 21, 8, 63, 1, 0, 95, 40, 12];
  const expected = referenceForward(model.config, model.weights, tokens);
  const vocab = model.config.vocabSize;
  afterAll(() => rmSync(model.dir, { recursive: true }));

  it.each(['f32', 'f16'] as const)('all positions in one step match the oracle (%s KV)', async (precision) => {
    const backend = await CpuBackend.load(model.dir, { threads: 2 });
    try {
      await backend.allocateCache({ numBlocks: 8, blockSize: 4, precision });
      const out = await backend.execute(buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, 4), logits: 'all' }]));
      tokens.forEach((__, p) => {
        const tolerance = precision === 'f32' ? 1e-4 : 5e-2;
        expect(maxAbsDiff(row(out.logits, p, vocab), expected[p] as Float64Array), `position ${p}`).toBeLessThan(tolerance);
      });
    } finally {
      await backend.dispose();
    }
  });

  it('chunked through shuffled blocks, it still matches', async () => {
    const backend = await CpuBackend.load(model.dir, { threads: 2 });
    try {
      await backend.allocateCache({ numBlocks: 8, blockSize: 4, precision: 'f32' });
      const blocks = shuffledBlocks(1, 8, 9).slice(0, 4);
      for (let past = 0; past < tokens.length; past += 3) {
        const chunk = tokens.slice(past, past + 3);
        const out = await backend.execute(buildBatch([{ tokens: chunk, pastLen: past, blocks, logits: 'all' }]));
        chunk.forEach((__, i) => expect(maxAbsDiff(row(out.logits, i, vocab), expected[past + i] as Float64Array)).toBeLessThan(1e-4));
      }
    } finally {
      await backend.dispose();
    }
  });
});
