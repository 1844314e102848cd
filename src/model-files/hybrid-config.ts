/**
 * The parts of config.json only hybrid models have (Qwen3.5, Qwen3-Next):
 * their Gated DeltaNet layers and Qwen3-Next's mixture-of-experts
 * feed-forward, read as transformers reads them (tools/hybrid/NOTES.md).
 */
import { ModelLoadError } from '../errors.js';

/**
 * The Gated DeltaNet layers of a hybrid model (tools/hybrid/NOTES.md section
 * 2). Hybrid models also gate their attention output (q_proj yields per head
 * [query | gate]) and apply every RMSNorm but the gated one as (1 + w).
 */
export interface LinearAttentionConfig {
  /** [numLayers]: true for a Gated DeltaNet layer, false for a (gated) full-attention one. */
  readonly layers: readonly boolean[];
  readonly numKeyHeads: number;
  /** A multiple of numKeyHeads: value head h reads key head floor(h / (numValueHeads / numKeyHeads)). */
  readonly numValueHeads: number;
  readonly keyHeadDim: number;
  readonly valueHeadDim: number;
  /** Taps of the causal depthwise convolution (linear_conv_kernel_dim). */
  readonly convKernel: number;
  /**
   * Qwen3-Next's layout: the four input projections stored as two,
   * in_proj_qkvz and in_proj_ba, grouped per key head. Absent: Qwen3.5's
   * in_proj_qkv, in_proj_z, in_proj_b and in_proj_a.
   */
  readonly fusedProjections?: boolean;
}

/**
 * A sparse mixture-of-experts feed-forward (Qwen3-Next; tools/hybrid/NOTES.md
 * section 4): per token, a softmax router picks expertsPerToken of numExperts
 * experts, whose outputs are summed with the router's weights, plus a shared
 * expert scaled by a sigmoid gate.
 */
export interface MixtureOfExpertsConfig {
  /** [numLayers]: true for a mixture-of-experts layer, false for a dense MLP (intermediate_size). */
  readonly layers: readonly boolean[];
  readonly numExperts: number;
  readonly expertsPerToken: number;
  /** One routed expert's MLP width (moe_intermediate_size). */
  readonly expertIntermediateSize: number;
  /** The shared expert's MLP width; 0: no shared expert. */
  readonly sharedExpertIntermediateSize: number;
  /** Whether the chosen experts' probabilities are divided by their sum (norm_topk_prob). */
  readonly normTopKProb: boolean;
}

type Json = Record<string, unknown>;

function reader(json: Json, file: string) {
  const fail = (message: string): never => {
    throw new ModelLoadError(`${file}: ${message}`, file);
  };
  const int = (key: string, min: number, fallback?: number): number => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
      return fail(`"${key}" must be ${min === 0 ? 'a non-negative' : 'a positive'} integer`);
    return v;
  };
  return { fail, int };
}

/**
 * Which layers are Gated DeltaNet and their shape. `layer_types` when given,
 * else every `full_attention_interval`-th layer (default 4) is full attention,
 * as transformers derives it.
 */
export function readLinearAttention(json: Json, numLayers: number, file: string, fusedProjections: boolean): LinearAttentionConfig {
  const { fail, int } = reader(json, file);
  let layers: boolean[];
  if (json.layer_types !== undefined) {
    const types = json.layer_types;
    if (!Array.isArray(types) || types.length !== numLayers)
      return fail(`"layer_types" must list one type per layer (${numLayers})`);
    layers = types.map((type, i) => {
      if (type !== 'linear_attention' && type !== 'full_attention')
        return fail(`layer_types[${i}] is ${JSON.stringify(type)}: expected "linear_attention" or "full_attention"`);
      return type === 'linear_attention';
    });
  } else {
    const interval = int('full_attention_interval', 1, 4);
    layers = Array.from({ length: numLayers }, (_, i) => (i + 1) % interval !== 0);
  }
  const numKeyHeads = int('linear_num_key_heads', 1);
  const numValueHeads = int('linear_num_value_heads', 1);
  if (numValueHeads % numKeyHeads !== 0)
    fail(`linear_num_value_heads (${numValueHeads}) must be a multiple of linear_num_key_heads (${numKeyHeads})`);
  const convKernel = int('linear_conv_kernel_dim', 1);
  if (convKernel > 16) fail(`linear_conv_kernel_dim ${convKernel} is larger than the 16 taps weft's CPU backend supports`);
  const valueHeadDim = int('linear_value_head_dim', 1);
  if (valueHeadDim > 512) fail(`linear_value_head_dim ${valueHeadDim} is larger than the 512 weft's CPU backend supports`);
  return {
    layers,
    numKeyHeads,
    numValueHeads,
    keyHeadDim: int('linear_key_head_dim', 1),
    valueHeadDim,
    convKernel,
    ...(fusedProjections && { fusedProjections }),
  };
}

/**
 * Qwen3-Next's experts. A layer is a mixture of experts when num_experts > 0,
 * it is not in mlp_only_layers, and (layer + 1) % decoder_sparse_step == 0,
 * as transformers decides it; undefined when no layer is.
 */
export function readMixtureOfExperts(json: Json, numLayers: number, file: string): MixtureOfExpertsConfig | undefined {
  const { fail, int } = reader(json, file);
  const numExperts = int('num_experts', 0);
  if (numExperts === 0) return undefined;
  const sparseStep = int('decoder_sparse_step', 1, 1);
  const dense = json.mlp_only_layers ?? [];
  if (!Array.isArray(dense) || dense.some((l) => typeof l !== 'number' || !Number.isSafeInteger(l) || l < 0 || l >= numLayers))
    return fail(`"mlp_only_layers" must list layer indices below ${numLayers}`);
  const layers = Array.from({ length: numLayers }, (_, i) => !dense.includes(i) && (i + 1) % sparseStep === 0);
  if (!layers.some(Boolean)) return undefined;
  const expertsPerToken = int('num_experts_per_tok', 1);
  if (expertsPerToken > numExperts) fail(`num_experts_per_tok (${expertsPerToken}) must not exceed num_experts (${numExperts})`);
  const normTopKProb = json.norm_topk_prob ?? false;
  if (typeof normTopKProb !== 'boolean') fail('"norm_topk_prob" must be a boolean');
  return {
    layers,
    numExperts,
    expertsPerToken,
    expertIntermediateSize: int('moe_intermediate_size', 1),
    sharedExpertIntermediateSize: int('shared_expert_intermediate_size', 0, 0),
    normTopKProb: normTopKProb as boolean,
  };
}
