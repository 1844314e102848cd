/**
 * Which tensors a model needs, checked against what its safetensors hold.
 *
 * The result is a load plan: for every weight the native model takes, its
 * slot (kind + layer, as native/src/cpu/weights.cc names them) and where its
 * bytes are. Any missing tensor, unsupported dtype or wrong shape is a
 * ModelLoadError naming the file and the tensor.
 */
import { ModelLoadError } from '../errors.js';
import type { ModelConfig } from './config.js';
import type { TensorIndex, TensorInfo } from './safetensors.js';

/** The dtypes the loader accepts: 16-bit matrices stay 16-bit in memory, norms and biases become float32. */
export const WEIGHT_DTYPES = ['F32', 'F16', 'BF16'] as const;

export interface PlannedTensor {
  /** Native slot name, e.g. "q_proj" or "q_proj.bias". */
  readonly kind: string;
  /** Layer index, or -1 for model-level tensors. */
  readonly layer: number;
  readonly info: TensorInfo;
}

export function planWeights(config: ModelConfig, tensors: TensorIndex, folder: string): PlannedTensor[] {
  const plan: PlannedTensor[] = [];
  const q = config.numHeads * config.headDim;
  const kv = config.numKvHeads * config.headDim;
  const h = config.hiddenSize;

  const need = (name: string, kind: string, layer: number, shape: number[]): void => {
    const info = tensors.get(name);
    if (!info) throw new ModelLoadError(`${folder}: tensor ${name} is missing`, folder, name);
    const where = `${info.file} (tensor ${name})`;
    if (!(WEIGHT_DTYPES as readonly string[]).includes(info.dtype))
      throw new ModelLoadError(`${where}: dtype ${info.dtype} is not supported (${WEIGHT_DTYPES.join(', ')})`, info.file, name);
    if (info.shape.length !== shape.length || info.shape.some((d, i) => d !== shape[i]))
      throw new ModelLoadError(`${where}: shape ${JSON.stringify(info.shape)}, expected ${JSON.stringify(shape)}`, info.file, name);
    plan.push({ kind, layer, info });
  };

  need('model.embed_tokens.weight', 'embed_tokens', -1, [config.vocabSize, h]);
  for (let l = 0; l < config.numLayers; l++) {
    const p = `model.layers.${l}.`;
    need(`${p}input_layernorm.weight`, 'input_layernorm', l, [h]);
    need(`${p}self_attn.q_proj.weight`, 'q_proj', l, [q, h]);
    need(`${p}self_attn.k_proj.weight`, 'k_proj', l, [kv, h]);
    need(`${p}self_attn.v_proj.weight`, 'v_proj', l, [kv, h]);
    need(`${p}self_attn.o_proj.weight`, 'o_proj', l, [h, q]);
    if (config.qkvBias) {
      need(`${p}self_attn.q_proj.bias`, 'q_proj.bias', l, [q]);
      need(`${p}self_attn.k_proj.bias`, 'k_proj.bias', l, [kv]);
      need(`${p}self_attn.v_proj.bias`, 'v_proj.bias', l, [kv]);
    }
    if (config.oBias) need(`${p}self_attn.o_proj.bias`, 'o_proj.bias', l, [h]);
    if (config.qkNorm) {
      need(`${p}self_attn.q_norm.weight`, 'q_norm', l, [config.headDim]);
      need(`${p}self_attn.k_norm.weight`, 'k_norm', l, [config.headDim]);
    }
    need(`${p}post_attention_layernorm.weight`, 'post_attention_layernorm', l, [h]);
    need(`${p}mlp.gate_proj.weight`, 'gate_proj', l, [config.intermediateSize, h]);
    need(`${p}mlp.up_proj.weight`, 'up_proj', l, [config.intermediateSize, h]);
    need(`${p}mlp.down_proj.weight`, 'down_proj', l, [h, config.intermediateSize]);
  }
  need('model.norm.weight', 'norm', -1, [h]);
  // Tied models reuse the embedding; an lm_head.weight saved alongside is the same matrix.
  if (!config.tieWordEmbeddings) need('lm_head.weight', 'lm_head', -1, [config.vocabSize, h]);
  return plan;
}
