/**
 * GGUF and safetensors of the same weights give the same logits: random
 * models of each architecture converted the way llama.cpp's converter does
 * (q/k permuted for llama), loaded through both paths.
 */
import { rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { ModelLoadError } from '../../src/index.js';
import { readGgufFile } from '../../src/model-files/gguf/reader.js';
import { buildBatch, contiguousBlocks, maxAbsDiff } from '../native/helpers.js';
import { writeRandomModel } from '../native/random-model.js';
import { f32Bytes, readAllTensors, writeSafetensors } from './safetensors-writer.js';
import { fromQ8_0, toQ8_0 } from '../support/ggml-quantize.js';
import { convertHfToGguf } from '../support/hf-to-gguf.js';

const base = {
  hidden_size: 64, intermediate_size: 96, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
  vocab_size: 96, max_position_embeddings: 64, rms_norm_eps: 1e-6,
};
const variants: Array<[string, Record<string, unknown>]> = [
  ['Llama (q/k permuted in the file), attention bias, head_dim 16, tied', { ...base, architectures: ['LlamaForCausalLM'], head_dim: 16, attention_bias: true, tie_word_embeddings: true }],
  ['Llama with linear RoPE scaling, untied', { ...base, architectures: ['LlamaForCausalLM'], rope_scaling: { rope_type: 'linear', factor: 3 }, tie_word_embeddings: false }],
  ['Qwen2 (q/k/v bias)', { ...base, architectures: ['Qwen2ForCausalLM'], rope_theta: 1e6, tie_word_embeddings: false }],
  ['Qwen3 (q/k norm, head_dim 32)', { ...base, architectures: ['Qwen3ForCausalLM'], head_dim: 32, rope_theta: 1e6, tie_word_embeddings: true }],
];
const tokens = [3, 17, 90, 4, 4, 55, 21, 8, 63, 1, 0, 95, 40, 12];

async function allLogits(load: () => Promise<CpuBackend>): Promise<Float32Array> {
  const backend = await load();
  try {
    await backend.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
    return (await backend.execute(buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, 1), logits: 'all' }]))).logits;
  } finally {
    await backend.dispose();
  }
}

const cleanup: string[] = [];
afterAll(() => cleanup.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe.each(variants)('%s', (label, configJson) => {
  const model = writeRandomModel(configJson, 7);
  cleanup.push(model.dir);
  const gguf = join(model.dir, 'model.gguf');

  it('F32 GGUF logits equal the safetensors logits exactly, at every position', async () => {
    await convertHfToGguf(model.dir, gguf, 'F32');
    const expected = await allLogits(() => CpuBackend.load(model.dir, { threads: 2 }));
    const actual = await allLogits(() => CpuBackend.loadGguf(gguf, { threads: 2 }));
    expect(actual.length).toBe(tokens.length * model.config.vocabSize);
    expect(maxAbsDiff(actual, expected)).toBe(0);
  });

  it('F16 GGUF logits stay close to the float32 ones', async () => {
    const file = join(model.dir, 'model-f16.gguf');
    await convertHfToGguf(model.dir, file, 'F16');
    const expected = await allLogits(() => CpuBackend.load(model.dir, { threads: 2 }));
    const actual = await allLogits(() => CpuBackend.loadGguf(file, { threads: 2 }));
    expect(maxAbsDiff(actual, expected)).toBeLessThan(0.05);
    expect(maxAbsDiff(actual, expected)).toBeGreaterThan(0); // it really is F16
  });

  if (label.startsWith('Llama (q/k')) {
    it('a llama file whose q rows were left in HF order gives other logits (the reordering is needed)', async () => {
      const file = join(model.dir, 'model.gguf');
      const permuted = await allLogits(() => CpuBackend.loadGguf(file, { threads: 2 }));
      const hfQ = (await readAllTensors(join(model.dir, 'model.safetensors'))).find((t) => t.name === 'model.layers.0.self_attn.q_proj.weight')!;
      const patched = readFileSync(file);
      Buffer.from(hfQ.data).copy(patched, readGgufFile(file).tensors.get('blk.0.attn_q.weight')!.offset);
      const wrong = join(model.dir, 'unpermuted-q.gguf');
      writeFileSync(wrong, patched);
      const broken = await allLogits(() => CpuBackend.loadGguf(wrong, { threads: 2 }));
      expect(maxAbsDiff(broken, permuted)).toBeGreaterThan(1e-3);
    });
  }
});

describe('Q8_0 GGUF weights', () => {
  const model = writeRandomModel({ ...base, architectures: ['Qwen3ForCausalLM'], head_dim: 32, tie_word_embeddings: false }, 11);
  cleanup.push(model.dir);

  it('load as packed Q8_0 and match a float32 model holding the dequantized values, or are refused with a typed error', async () => {
    const file = join(model.dir, 'model-q8.gguf');
    await convertHfToGguf(model.dir, file, 'Q8_0');
    // The same model with every matrix replaced by its Q8_0 round trip, as float32 safetensors.
    const tensors = (await readAllTensors(join(model.dir, 'model.safetensors'))).map((t) =>
      t.shape.length === 2 ? { ...t, data: f32Bytes(fromQ8_0(toQ8_0(new Float32Array(t.data.slice().buffer)))) } : t,
    );
    writeSafetensors(join(model.dir, 'model.safetensors'), tensors);
    let actual: Float32Array;
    try {
      actual = await allLogits(() => CpuBackend.loadGguf(file, { threads: 2 }));
    } catch (error) {
      expect(error).toBeInstanceOf(ModelLoadError);
      expect((error as Error).message).toMatch(/Q8_0/);
      console.warn('[weft tests] this native build has no Q8_0 weights yet: checked that the GGUF is refused with a typed error');
      return;
    }
    const expected = await allLogits(() => CpuBackend.load(model.dir, { threads: 2 }));
    // int8 kernels also quantize the activations per block: close, not equal.
    expect(maxAbsDiff(actual, expected)).toBeLessThan(0.1);
  });
});
