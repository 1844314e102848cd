/** Tiny seeded random-weight models for architecture tests (written as real HF folders). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseModelConfig, type ModelConfig } from '../../src/model-files/config.js';
import { f32Bytes, type RawTensor, writeSafetensors } from '../model-files/safetensors-writer.js';

/** Writes config.json + model.safetensors; returns the folder, config and float64 weights (the float32 values). */
export function writeRandomModel(configJson: Record<string, unknown>, seed: number): { dir: string; config: ModelConfig; weights: Map<string, Float64Array> } {
  const config = parseModelConfig(configJson);
  let state = seed >>> 0 || 1;
  const uniform = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5; // [-0.5, 0.5)
  };
  const H = config.hiddenSize, d = config.headDim;
  const specs: Array<[string, number[], 'linear' | 'norm' | 'bias' | 'embed']> = [['model.embed_tokens.weight', [config.vocabSize, H], 'embed']];
  for (let l = 0; l < config.numLayers; l++) {
    const p = `model.layers.${l}.`;
    specs.push([`${p}input_layernorm.weight`, [H], 'norm'], [`${p}self_attn.q_proj.weight`, [config.numHeads * d, H], 'linear'],
      [`${p}self_attn.k_proj.weight`, [config.numKvHeads * d, H], 'linear'], [`${p}self_attn.v_proj.weight`, [config.numKvHeads * d, H], 'linear'],
      [`${p}self_attn.o_proj.weight`, [H, config.numHeads * d], 'linear']);
    if (config.qkvBias)
      specs.push([`${p}self_attn.q_proj.bias`, [config.numHeads * d], 'bias'], [`${p}self_attn.k_proj.bias`, [config.numKvHeads * d], 'bias'],
        [`${p}self_attn.v_proj.bias`, [config.numKvHeads * d], 'bias']);
    if (config.oBias) specs.push([`${p}self_attn.o_proj.bias`, [H], 'bias']);
    if (config.qkNorm) specs.push([`${p}self_attn.q_norm.weight`, [d], 'norm'], [`${p}self_attn.k_norm.weight`, [d], 'norm']);
    specs.push([`${p}post_attention_layernorm.weight`, [H], 'norm'], [`${p}mlp.gate_proj.weight`, [config.intermediateSize, H], 'linear'],
      [`${p}mlp.up_proj.weight`, [config.intermediateSize, H], 'linear'], [`${p}mlp.down_proj.weight`, [H, config.intermediateSize], 'linear']);
  }
  specs.push(['model.norm.weight', [H], 'norm']);
  if (!config.tieWordEmbeddings) specs.push(['lm_head.weight', [config.vocabSize, H], 'linear']);

  const weights = new Map<string, Float64Array>();
  const tensors: RawTensor[] = specs.map(([name, shape, kind]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const fanIn = shape[shape.length - 1] as number;
    const values = Float32Array.from({ length: n }, () => {
      const u = uniform();
      if (kind === 'norm') return 1 + 0.6 * u;
      if (kind === 'bias') return u;
      if (kind === 'embed') return 3 * u;
      return (5 * u) / Math.sqrt(fanIn);
    });
    weights.set(name, Float64Array.from(values));
    return { name, dtype: 'F32', shape, data: f32Bytes(values) };
  });
  const dir = mkdtempSync(join(tmpdir(), 'weft-random-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(configJson));
  writeSafetensors(join(dir, 'model.safetensors'), tensors);
  return { dir, config, weights };
}
