/**
 * The GGUF load plan: llama.cpp tensor names -> weft's native weight slots,
 * with GGUF's dims (innermost first) turned into safetensors-style shapes
 * ([rows, cols]) and every type, shape and presence checked.
 *
 * Quantized types stay packed: the native loader takes the bytes at `offset`
 * in ggml's block layout, rows along ne0. Norms and biases must be float.
 * Tied models have no lm_head slot (llama.cpp ties when output.weight is absent).
 */
import { ModelLoadError, UnsupportedModelError } from '../../errors.js';
import type { ModelConfig } from '../config.js';
import type { PlannedTensor, WeightSlot } from '../weights.js';
import { LOADABLE_GGML_TYPES } from './ggml-types.js';
import type { GgufFile, GgufTensor } from './reader.js';

const FLOAT_TYPES = ['F32', 'F16', 'BF16'];

/**
 * What undoes llama.cpp's converter on one qwen35 tensor (tools/hybrid/NOTES.md
 * section 8), so the backend receives what the safetensors give it.
 */
export interface GgufHybridTransform {
  /**
   * qwen3next keeps in_proj_ba fused as ssm_ba, per key head [b (r rows) | a (r rows)]
   * with r = valueHeads / keyHeads: gather the rows of one part, in value-head order.
   */
  readonly baPart?: { readonly part: 'b' | 'a'; readonly keyHeads: number; readonly valueHeads: number };
  /** Stored as 1 + w (every RMSNorm of the model but the gated one): subtract 1. */
  readonly minusOne?: boolean;
  /** Stored as A = -exp(A_log): take log(-A). */
  readonly aLog?: boolean;
  /**
   * Value heads stored in ggml's tiled order (GGUF head j*keyHeads + g is HF head
   * g*(valueHeads/keyHeads) + j): put them back, along the rows (from row `first`
   * on, `block` rows per head) or the columns (`block` columns per head).
   */
  readonly valueHeads?: {
    readonly axis: 'rows' | 'cols';
    readonly rows: number;
    readonly first: number;
    readonly block: number;
    readonly keyHeads: number;
    readonly valueHeads: number;
  };
}

/** A planned GGUF tensor; `headPermutation` is set where q/k rows must be put back in HF order, `hybrid` where qwen35's converter transformed it. */
export interface PlannedGgufTensor extends PlannedTensor {
  readonly headPermutation?: { readonly heads: number; readonly headDim: number };
  readonly hybrid?: GgufHybridTransform;
}

/** llama.cpp's names of weft's layer slots (the model-level ones are in ggufTensorName). */
const LAYER_NAMES: Readonly<Record<string, string>> = {
  input_layernorm: 'attn_norm.weight',
  q_proj: 'attn_q.weight',
  k_proj: 'attn_k.weight',
  v_proj: 'attn_v.weight',
  o_proj: 'attn_output.weight',
  'q_proj.bias': 'attn_q.bias',
  'k_proj.bias': 'attn_k.bias',
  'v_proj.bias': 'attn_v.bias',
  'o_proj.bias': 'attn_output.bias',
  q_norm: 'attn_q_norm.weight',
  k_norm: 'attn_k_norm.weight',
  post_attention_layernorm: 'ffn_norm.weight',
  gate_proj: 'ffn_gate.weight',
  up_proj: 'ffn_up.weight',
  down_proj: 'ffn_down.weight',
};
const MODEL_NAMES: Readonly<Record<string, string>> = { embed_tokens: 'token_embd.weight', norm: 'output_norm.weight', lm_head: 'output.weight' };

/** qwen35's names where they differ (its post-attention norm) or are its own (the Gated DeltaNet's). */
const HYBRID_LAYER_NAMES: Readonly<Record<string, string>> = {
  post_attention_layernorm: 'post_attention_norm.weight',
  'linear_attn.in_proj_qkv': 'attn_qkv.weight',
  'linear_attn.in_proj_z': 'attn_gate.weight',
  'linear_attn.in_proj_b': 'ssm_beta.weight',
  'linear_attn.in_proj_a': 'ssm_alpha.weight',
  'linear_attn.conv1d': 'ssm_conv1d.weight',
  'linear_attn.A_log': 'ssm_a',
  'linear_attn.dt_bias': 'ssm_dt.bias',
  'linear_attn.norm': 'ssm_norm.weight',
  'linear_attn.out_proj': 'ssm_out.weight',
};
/** qwen3next's where they differ from qwen35's: in_proj_b and in_proj_a are both read from the fused ssm_ba. */
const NEXT_LAYER_NAMES: Readonly<Record<string, string>> = {
  'linear_attn.in_proj_b': 'ssm_ba.weight',
  'linear_attn.in_proj_a': 'ssm_ba.weight',
};
/** A mixture of experts' slots (the routed experts' are in expertTensor). */
const MOE_LAYER_NAMES: Readonly<Record<string, string>> = {
  'mlp.gate': 'ffn_gate_inp.weight',
  'mlp.shared_expert.gate_proj': 'ffn_gate_shexp.weight',
  'mlp.shared_expert.up_proj': 'ffn_up_shexp.weight',
  'mlp.shared_expert.down_proj': 'ffn_down_shexp.weight',
  'mlp.shared_expert_gate': 'ffn_gate_inp_shexp.weight',
};
/** "mlp.experts.5.up_proj" -> expert 5 of the stacked ffn_up_exps (llama.cpp stacks the experts, expert outermost). */
function expertTensor(kind: string): { name: string; expert: number } | undefined {
  const m = /^mlp\.experts\.(\d+)\.(gate|up|down)_proj$/.exec(kind);
  return m ? { name: `ffn_${m[2]}_exps.weight`, expert: Number(m[1]) } : undefined;
}
/** The norms a hybrid model applies as (1 + w), which the converter stores with the 1 added. */
const PLUS_ONE_NORMS = new Set(['input_layernorm', 'post_attention_layernorm', 'norm', 'q_norm', 'k_norm']);

/** A bert file's names of the encoder's slots (model/encoder.cc; encoder-config.ts has BertModel's). */
const BERT_MODEL_NAMES: Readonly<Record<string, string>> = {
  embed_tokens: 'token_embd.weight',
  position_embeddings: 'position_embd.weight',
  token_type_embeddings: 'token_types.weight',
  embeddings_layernorm: 'token_embd_norm.weight',
  'embeddings_layernorm.bias': 'token_embd_norm.bias',
};
const BERT_LAYER_NAMES: Readonly<Record<string, string>> = {
  q_proj: 'attn_q.weight',
  'q_proj.bias': 'attn_q.bias',
  k_proj: 'attn_k.weight',
  'k_proj.bias': 'attn_k.bias',
  v_proj: 'attn_v.weight',
  'v_proj.bias': 'attn_v.bias',
  o_proj: 'attn_output.weight',
  'o_proj.bias': 'attn_output.bias',
  attention_layernorm: 'attn_output_norm.weight',
  'attention_layernorm.bias': 'attn_output_norm.bias',
  up_proj: 'ffn_up.weight',
  'up_proj.bias': 'ffn_up.bias',
  down_proj: 'ffn_down.weight',
  'down_proj.bias': 'ffn_down.bias',
  output_layernorm: 'layer_output_norm.weight',
  'output_layernorm.bias': 'layer_output_norm.bias',
};

/** A nomic-bert file's: q, k and v are thirds of the fused attn_qkv (planGgufWeights cuts them), the MLP gated. */
const NOMIC_MODEL_NAMES: Readonly<Record<string, string>> = {
  embed_tokens: 'token_embd.weight',
  token_type_embeddings: 'token_types.weight',
  embeddings_layernorm: 'token_embd_norm.weight',
  'embeddings_layernorm.bias': 'token_embd_norm.bias',
};
const NOMIC_LAYER_NAMES: Readonly<Record<string, string>> = {
  q_proj: 'attn_qkv.weight',
  k_proj: 'attn_qkv.weight',
  v_proj: 'attn_qkv.weight',
  o_proj: 'attn_output.weight',
  attention_layernorm: 'attn_output_norm.weight',
  'attention_layernorm.bias': 'attn_output_norm.bias',
  up_proj: 'ffn_up.weight',
  gate_proj: 'ffn_gate.weight',
  down_proj: 'ffn_down.weight',
  output_layernorm: 'layer_output_norm.weight',
  'output_layernorm.bias': 'layer_output_norm.bias',
};
/** Which third of nomic-bert's attn_qkv rows a slot is. */
const QKV_PART: Readonly<Record<string, number>> = { q_proj: 0, k_proj: 1, v_proj: 2 };

/** Which GGUF naming a file uses: llama.cpp's base one, qwen35's, qwen3next's, bert's or nomic-bert's. */
export type GgufNaming = 'base' | 'qwen35' | 'qwen3next' | 'bert' | 'nomic-bert';

/** The GGUF tensor name of a weight slot: "q_proj" in layer 3 is blk.3.attn_q.weight. */
export function ggufTensorName(kind: string, layer: number, naming: GgufNaming = 'base'): string | undefined {
  if (naming === 'bert' || naming === 'nomic-bert') {
    const bert = naming === 'bert';
    const name = layer < 0 ? (bert ? BERT_MODEL_NAMES : NOMIC_MODEL_NAMES)[kind] : (bert ? BERT_LAYER_NAMES : NOMIC_LAYER_NAMES)[kind];
    return name === undefined || layer < 0 ? name : `blk.${layer}.${name}`;
  }
  if (layer < 0) return MODEL_NAMES[kind];
  const name =
    (naming === 'qwen3next' ? (NEXT_LAYER_NAMES[kind] ?? MOE_LAYER_NAMES[kind] ?? expertTensor(kind)?.name) : undefined) ??
    (naming !== 'base' ? HYBRID_LAYER_NAMES[kind] : undefined) ??
    LAYER_NAMES[kind];
  return name === undefined ? undefined : `blk.${layer}.${name}`;
}

/** How llama.cpp's qwen35 / qwen3next converter changed the tensor of this slot, or undefined where it did not. */
function hybridTransform(kind: string, config: ModelConfig, naming: GgufNaming): GgufHybridTransform | undefined {
  const linear = config.linearAttention!;
  if (PLUS_ONE_NORMS.has(kind)) return { minusOne: true };
  const { numKeyHeads: keyHeads, numValueHeads: valueHeads, keyHeadDim, valueHeadDim } = linear;
  // qwen3next keeps HF's grouped value heads: only A and the fused ba change.
  if (naming === 'qwen3next') {
    if (kind === 'linear_attn.A_log') return { aLog: true };
    if (kind === 'linear_attn.in_proj_b' || kind === 'linear_attn.in_proj_a')
      return { baPart: { part: kind === 'linear_attn.in_proj_b' ? 'b' : 'a', keyHeads, valueHeads } };
    return undefined;
  }
  const keyChannels = 2 * keyHeads * keyHeadDim;
  const channels = keyChannels + valueHeads * valueHeadDim;
  const reorder = (axis: 'rows' | 'cols', rows: number, first: number, block: number): GgufHybridTransform['valueHeads'] =>
    keyHeads === valueHeads ? undefined : { axis, rows, first, block, keyHeads, valueHeads };
  const heads = (t: GgufHybridTransform['valueHeads']): GgufHybridTransform | undefined => (t === undefined ? undefined : { valueHeads: t });
  switch (kind) {
    case 'linear_attn.in_proj_qkv':
    case 'linear_attn.conv1d':
      return heads(reorder('rows', channels, keyChannels, valueHeadDim));
    case 'linear_attn.in_proj_z':
      return heads(reorder('rows', valueHeads * valueHeadDim, 0, valueHeadDim));
    case 'linear_attn.in_proj_b':
    case 'linear_attn.in_proj_a':
    case 'linear_attn.dt_bias':
      return heads(reorder('rows', valueHeads, 0, 1));
    case 'linear_attn.A_log': {
      const order = reorder('rows', valueHeads, 0, 1);
      return { aLog: true, ...(order && { valueHeads: order }) };
    }
    case 'linear_attn.out_proj':
      return heads(reorder('cols', config.hiddenSize, 0, valueHeadDim));
    default:
      return undefined;
  }
}

/**
 * One planned tensor per slot the backend reports (native/src/cpu/model/weights.cc's
 * slot table), found in the GGUF by llama.cpp's name and checked against the
 * slot's shape. With `interleavedRope` (llama.cpp's llama architecture) q/k
 * weights and biases are marked for head-row reordering.
 */
export function planGgufWeights(slots: readonly WeightSlot[], config: ModelConfig, gguf: GgufFile, interleavedRope: boolean): PlannedGgufTensor[] {
  const file = gguf.file;
  const hybrid = config.linearAttention !== undefined;
  const naming: GgufNaming =
    config.encoder !== undefined
      ? (config.architecture === 'NomicBertModel' ? 'nomic-bert' : 'bert')
      : config.architecture === 'Qwen3NextForCausalLM' ? 'qwen3next' : hybrid ? 'qwen35' : 'base';
  return slots.map(({ kind, layer, shape }) => {
    const name = ggufTensorName(kind, layer, naming);
    if (name === undefined) throw new ModelLoadError(`${file}: weft has no GGUF name for weight ${kind}${layer >= 0 ? ` of layer ${layer}` : ''}`, file);
    const t = gguf.tensors.get(name);
    if (!t) throw new ModelLoadError(`${file}: tensor ${name} is missing`, file, name);
    const expert = expertTensor(kind);
    if (expert) return plannedExpert(kind, layer, shape, t, expert.expert, config, file);
    if (naming === 'nomic-bert' && QKV_PART[kind] !== undefined) {
      // Rows are whole (quantized) rows in ggml, so a third of them is a third of the bytes.
      checkTensor(t, [3 * shape[0]!, shape[1]!], file);
      const bytes = t.byteLength / 3;
      return { kind, layer, info: { name: `${name}[${kind[0]}]`, file, dtype: t.type.name, shape: [...shape], offset: t.offset + QKV_PART[kind]! * bytes, byteLength: bytes } };
    }
    if (kind === 'mlp.shared_expert_gate' && t.dims.length === 1) {
      // Stored [hidden] or [hidden, 1]: both are the slot's one row.
      checkTensor(t, [shape[1]!], file);
      return { kind, layer, info: { name, file, dtype: t.type.name, shape: [...shape], offset: t.offset, byteLength: t.byteLength } };
    }
    if (naming === 'qwen3next' && (kind === 'linear_attn.in_proj_b' || kind === 'linear_attn.in_proj_a')) {
      checkTensor(t, [2 * shape[0]!, shape[1]!], file);
      return { kind, layer, info: { name, file, dtype: t.type.name, shape: [...shape], offset: t.offset, byteLength: t.byteLength }, hybrid: hybridTransform(kind, config, naming)! };
    }
    // The depthwise conv is stored [channels, taps] (GGUF dims [taps, channels]); the slot holds it flattened.
    const conv = kind === 'linear_attn.conv1d' && t.dims.length === 2;
    if (conv) {
      if (t.dims[0]! * t.dims[1]! !== shape[0] || t.dims[0] !== config.linearAttention?.convKernel)
        throw new ModelLoadError(`${file} (tensor ${name}): GGUF dims ${JSON.stringify(t.dims)}, expected [${config.linearAttention?.convKernel}, ${shape[0]! / (config.linearAttention?.convKernel ?? 1)}]`, file, name);
      checkType(t, true, file);
    } else checkTensor(t, [...shape], file);
    const heads = kind.startsWith('q_proj') ? config.numHeads : kind.startsWith('k_proj') ? config.numKvHeads : 0;
    const transform = hybrid ? hybridTransform(kind, config, naming) : undefined;
    return {
      kind,
      layer,
      info: { name, file, dtype: t.type.name, shape: conv ? [...shape] : [...t.dims].reverse(), offset: t.offset, byteLength: t.byteLength },
      ...(interleavedRope && heads > 0 && { headPermutation: { heads, headDim: config.headDim } }),
      ...(transform && { hybrid: transform }),
    };
  });
}

/** One routed expert's matrix: its slice of the stacked tensor (dims [cols, rows, experts]), read in place at its byte offset. */
function plannedExpert(kind: string, layer: number, shape: readonly number[], t: GgufTensor, expert: number, config: ModelConfig, file: string): PlannedGgufTensor {
  const experts = config.mixtureOfExperts?.numExperts ?? 0;
  const expected = [shape[1]!, shape[0]!, experts];
  if (t.dims.length !== 3 || t.dims.some((d, i) => d !== expected[i]))
    throw new ModelLoadError(`${file} (tensor ${t.name}): GGUF dims ${JSON.stringify(t.dims)}, expected ${JSON.stringify(expected)}`, file, t.name);
  checkType(t, false, file);
  const bytes = t.byteLength / experts;
  return { kind, layer, info: { name: `${t.name}[${expert}]`, file, dtype: t.type.name, shape: [...shape], offset: t.offset + expert * bytes, byteLength: bytes } };
}

/** `shape` is [rows, cols] (or [rows] for a vector); GGUF lists the same dims innermost first. */
function checkTensor(t: GgufTensor, shape: number[], file: string): void {
  const where = `${file} (tensor ${t.name})`;
  const expected = [...shape].reverse();
  if (t.dims.length !== expected.length || t.dims.some((d, i) => d !== expected[i]))
    throw new ModelLoadError(`${where}: GGUF dims ${JSON.stringify(t.dims)}, expected ${JSON.stringify(expected)}`, file, t.name);
  checkType(t, shape.length === 1, file);
}

function checkType(t: GgufTensor, vector: boolean, file: string): void {
  const where = `${file} (tensor ${t.name})`;
  if (!LOADABLE_GGML_TYPES.includes(t.type.name))
    throw new UnsupportedModelError(`${where}: tensor type ${t.type.name} is not supported (${LOADABLE_GGML_TYPES.join(', ')})`);
  if (vector && !FLOAT_TYPES.includes(t.type.name))
    throw new UnsupportedModelError(`${where}: a ${t.type.name} vector is not supported (norms and biases must be ${FLOAT_TYPES.join(', ')})`);
}

/**
 * Row order that undoes llama.cpp's q/k permutation, per head of `headDim`
 * rows: GGUF row 2i+s holds HF row s*headDim/2 + i (s = 0, 1). Entry r of
 * the result is the GGUF row that becomes HF row r.
 */
export function hfRowOrder(heads: number, headDim: number): Int32Array {
  const half = headDim / 2;
  const order = new Int32Array(heads * headDim);
  for (let head = 0; head < heads; head++) {
    const base = head * headDim;
    for (let s = 0; s < 2; s++) for (let i = 0; i < half; i++) order[base + s * half + i] = base + 2 * i + s;
  }
  return order;
}
