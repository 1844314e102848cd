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

/** A planned GGUF tensor; `headPermutation` is set where q/k rows must be put back in HF order. */
export interface PlannedGgufTensor extends PlannedTensor {
  readonly headPermutation?: { readonly heads: number; readonly headDim: number };
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

/** The GGUF tensor name of a weight slot: "q_proj" in layer 3 is blk.3.attn_q.weight. */
export function ggufTensorName(kind: string, layer: number): string | undefined {
  if (layer < 0) return MODEL_NAMES[kind];
  const name = LAYER_NAMES[kind];
  return name === undefined ? undefined : `blk.${layer}.${name}`;
}

/**
 * One planned tensor per slot the backend reports (native/src/cpu/model/weights.cc's
 * slot table), found in the GGUF by llama.cpp's name and checked against the
 * slot's shape. With `interleavedRope` (llama.cpp's llama architecture) q/k
 * weights and biases are marked for head-row reordering.
 */
export function planGgufWeights(slots: readonly WeightSlot[], config: ModelConfig, gguf: GgufFile, interleavedRope: boolean): PlannedGgufTensor[] {
  const file = gguf.file;
  return slots.map(({ kind, layer, shape }) => {
    const name = ggufTensorName(kind, layer);
    if (name === undefined) throw new ModelLoadError(`${file}: weft has no GGUF name for weight ${kind}${layer >= 0 ? ` of layer ${layer}` : ''}`, file);
    const t = gguf.tensors.get(name);
    if (!t) throw new ModelLoadError(`${file}: tensor ${name} is missing`, file, name);
    checkTensor(t, [...shape], file);
    const heads = kind.startsWith('q_proj') ? config.numHeads : kind.startsWith('k_proj') ? config.numKvHeads : 0;
    return {
      kind,
      layer,
      info: { name, file, dtype: t.type.name, shape: [...t.dims].reverse(), offset: t.offset, byteLength: t.byteLength },
      ...(interleavedRope && heads > 0 && { headPermutation: { heads, headDim: config.headDim } }),
    };
  });
}

/** `shape` is [rows, cols] (or [rows] for a vector); GGUF lists the same dims innermost first. */
function checkTensor(t: GgufTensor, shape: number[], file: string): void {
  const where = `${file} (tensor ${t.name})`;
  const expected = [...shape].reverse();
  if (t.dims.length !== expected.length || t.dims.some((d, i) => d !== expected[i]))
    throw new ModelLoadError(`${where}: GGUF dims ${JSON.stringify(t.dims)}, expected ${JSON.stringify(expected)}`, file, t.name);
  if (!LOADABLE_GGML_TYPES.includes(t.type.name))
    throw new UnsupportedModelError(`${where}: tensor type ${t.type.name} is not supported (${LOADABLE_GGML_TYPES.join(', ')})`);
  if (shape.length === 1 && !FLOAT_TYPES.includes(t.type.name))
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
