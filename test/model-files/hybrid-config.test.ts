// config.json of hybrid models (Qwen3.5, Qwen3-Next) read into ModelConfig:
// which layers are Gated DeltaNet, which are mixtures of experts, and the
// errors for configs weft cannot run, each naming the key.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelLoadError } from '../../src/errors.js';
import { parseModelConfig } from '../../src/model-files/config.js';
import { REPO_ROOT } from '../native/helpers.js';

const configOf = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', name, 'config.json'), 'utf8')) as Record<string, unknown>;
const next = configOf('qwen3next-tiny');

describe('Qwen3-Next config', () => {
  it('reads fused projections and a mixture of experts in every layer (decoder_sparse_step 1)', () => {
    const c = parseModelConfig(next);
    expect(c.architecture).toBe('Qwen3NextForCausalLM');
    expect(c.linearAttention).toMatchObject({ numKeyHeads: 2, numValueHeads: 4, keyHeadDim: 16, valueHeadDim: 8, convKernel: 4, fusedProjections: true });
    expect(c.linearAttention!.layers).toEqual([true, true, true, false, true, true, true, false]);
    expect(c.mixtureOfExperts).toEqual({
      layers: Array(8).fill(true), numExperts: 4, expertsPerToken: 2, expertIntermediateSize: 16, sharedExpertIntermediateSize: 32, normTopKProb: true,
    });
    expect(c.qkNorm).toBe(true);
  });

  it('is found by model_type alone', () => {
    const { architectures: _, ...rest } = next;
    expect(parseModelConfig(rest).architecture).toBe('Qwen3NextForCausalLM');
  });

  it('keeps dense layers where mlp_only_layers and decoder_sparse_step say, as transformers decides', () => {
    const c = parseModelConfig({ ...next, mlp_only_layers: [0, 5], decoder_sparse_step: 2 });
    // routed iff not listed and (layer + 1) % 2 == 0: layers 1, 3, 7 (5 is listed)
    expect(c.mixtureOfExperts!.layers).toEqual([false, true, false, true, false, false, false, true]);
  });

  it('has no mixture of experts when num_experts is 0 or every layer is dense', () => {
    expect(parseModelConfig({ ...next, num_experts: 0 }).mixtureOfExperts).toBeUndefined();
    expect(parseModelConfig({ ...next, mlp_only_layers: [0, 1, 2, 3, 4, 5, 6, 7] }).mixtureOfExperts).toBeUndefined();
  });

  it('reads a missing shared expert size as none, and derives layer types from full_attention_interval', () => {
    const { shared_expert_intermediate_size: _, layer_types: __, ...rest } = next;
    const c = parseModelConfig({ ...rest, full_attention_interval: 2 });
    expect(c.mixtureOfExperts!.sharedExpertIntermediateSize).toBe(0);
    expect(c.linearAttention!.layers).toEqual([true, false, true, false, true, false, true, false]);
  });

  it.each([
    [{ num_experts_per_tok: 5 }, 'num_experts_per_tok (5) must not exceed num_experts (4)'],
    [{ num_experts_per_tok: 0 }, '"num_experts_per_tok" must be a positive integer'],
    [{ moe_intermediate_size: undefined }, '"moe_intermediate_size" must be a positive integer'],
    [{ mlp_only_layers: [8] }, '"mlp_only_layers" must list layer indices below 8'],
    [{ decoder_sparse_step: 0 }, '"decoder_sparse_step" must be a positive integer'],
    [{ norm_topk_prob: 'yes' }, '"norm_topk_prob" must be a boolean'],
    [{ shared_expert_intermediate_size: -1 }, '"shared_expert_intermediate_size" must be a non-negative integer'],
    [{ linear_num_value_heads: 3 }, 'linear_num_value_heads (3) must be a multiple of linear_num_key_heads (2)'],
    [{ layer_types: ['linear_attention'] }, '"layer_types" must list one type per layer (8)'],
  ])('refuses %j with a ModelLoadError naming the key', (change, message) => {
    const bad = () => parseModelConfig({ ...next, ...change }, 'bad/config.json');
    expect(bad).toThrow(ModelLoadError);
    expect(bad).toThrow(`bad/config.json: ${message}`);
  });
});

describe('Qwen3.5 config', () => {
  it('has the unfused projections and no mixture of experts', () => {
    const c = parseModelConfig(configOf('qwen35-tiny'));
    expect(c.linearAttention!.fusedProjections).toBeUndefined();
    expect(c.mixtureOfExperts).toBeUndefined();
  });
});
