// The native slot table (native/src/cpu/model/weights.cc) is the one list of weights:
// CpuModel.weightSlots() reports it for a config, and the TypeScript load plan
// is made from that report. Here: what it reports for each config switch.
import { expect, it } from 'vitest';
import { loadNativeBinding, type NativeModelConfig } from '../../src/backends/cpu/native-binding.js';

const base: NativeModelConfig = {
  hidden: 8, layers: 2, heads: 4, kvHeads: 2, headDim: 4, intermediate: 12, vocab: 10, rmsEps: 1e-6,
  qkvBias: false, oBias: false, qkNorm: false, tiedEmbeddings: true, slidingWindow: 0, invFreq: new Float64Array([1, 0.01]), threads: 1,
};

const slotsOf = (config: NativeModelConfig) => {
  const model = new (loadNativeBinding().CpuModel)(config);
  try {
    return model.weightSlots();
  } finally {
    model.dispose();
  }
};
const names = (config: NativeModelConfig) => slotsOf(config).map((s) => `${s.kind}@${s.layer}`);

it('lists the slots of a plain tied Llama model with their shapes, model-level first', () => {
  const slots = slotsOf(base);
  expect(slots.slice(0, 2)).toEqual([
    { kind: 'embed_tokens', layer: -1, shape: [10, 8] },
    { kind: 'norm', layer: -1, shape: [8] },
  ]);
  const layer1 = Object.fromEntries(slots.filter((s) => s.layer === 1).map((s) => [s.kind, s.shape]));
  expect(layer1).toEqual({
    input_layernorm: [8], q_proj: [16, 8], k_proj: [8, 8], v_proj: [8, 8], o_proj: [8, 16],
    post_attention_layernorm: [8], gate_proj: [12, 8], up_proj: [12, 8], down_proj: [8, 12],
  });
  expect(slots).toHaveLength(2 + 2 * 9);
});

it('adds the biases, q/k norms and the LM head only when the config has them', () => {
  expect(names({ ...base, qkvBias: true })).toEqual(expect.arrayContaining(['q_proj.bias@0', 'k_proj.bias@1', 'v_proj.bias@1']));
  expect(names({ ...base, qkvBias: true })).not.toContain('o_proj.bias@0');
  expect(names({ ...base, oBias: true })).toContain('o_proj.bias@1');
  expect(names({ ...base, qkNorm: true })).toEqual(expect.arrayContaining(['q_norm@0', 'k_norm@1']));
  expect(names({ ...base, tiedEmbeddings: false })).toContain('lm_head@-1');
  expect(names(base).filter((n) => /bias|q_norm|k_norm|lm_head/.test(n))).toEqual([]);
  const qkNorm = slotsOf({ ...base, qkNorm: true }).find((s) => s.kind === 'k_norm');
  expect(qkNorm?.shape).toEqual([4]);
});
