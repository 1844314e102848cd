/**
 * The GGUF load plan: llama.cpp tensor names -> weft's native weight slots,
 * with GGUF's dims (innermost first) turned into safetensors-style shapes
 * ([rows, cols]) and every type, shape and presence checked.
 *
 * Quantized types stay packed: the native loader takes the bytes at `offset`
 * in ggml's block layout, rows along ne0. Norms and biases must be float.
 */
import { ModelLoadError, UnsupportedModelError } from '../../errors.js';
import type { ModelConfig } from '../../models/config.js';
import type { PlannedTensor } from '../../models/weights.js';
import { LOADABLE_GGML_TYPES } from './ggml-types.js';
import type { GgufFile, GgufTensor } from './reader.js';

const FLOAT_TYPES = ['F32', 'F16', 'BF16'];

/** A planned GGUF tensor; `headPermutation` is set where q/k rows must be put back in HF order. */
export interface PlannedGgufTensor extends PlannedTensor {
  readonly headPermutation?: { readonly heads: number; readonly headDim: number };
}

export function planGgufWeights(config: ModelConfig, gguf: GgufFile, interleavedRope: boolean): PlannedGgufTensor[] {
  const plan: PlannedGgufTensor[] = [];
  const q = config.numHeads * config.headDim;
  const kv = config.numKvHeads * config.headDim;
  const h = config.hiddenSize;
  const file = gguf.file;

  const need = (name: string, kind: string, layer: number, shape: number[], permuteHeads?: number): void => {
    const t = gguf.tensors.get(name);
    if (!t) throw new ModelLoadError(`${file}: tensor ${name} is missing`, file, name);
    checkTensor(t, shape, file);
    plan.push({
      kind,
      layer,
      info: { name, file, dtype: t.type.name, shape: [...t.dims].reverse(), offset: t.offset, byteLength: t.byteLength },
      ...(permuteHeads !== undefined && interleavedRope && { headPermutation: { heads: permuteHeads, headDim: config.headDim } }),
    });
  };

  need('token_embd.weight', 'embed_tokens', -1, [config.vocabSize, h]);
  for (let l = 0; l < config.numLayers; l++) {
    const p = `blk.${l}.`;
    need(`${p}attn_norm.weight`, 'input_layernorm', l, [h]);
    need(`${p}attn_q.weight`, 'q_proj', l, [q, h], config.numHeads);
    need(`${p}attn_k.weight`, 'k_proj', l, [kv, h], config.numKvHeads);
    need(`${p}attn_v.weight`, 'v_proj', l, [kv, h]);
    need(`${p}attn_output.weight`, 'o_proj', l, [h, q]);
    if (config.qkvBias) {
      need(`${p}attn_q.bias`, 'q_proj.bias', l, [q], config.numHeads);
      need(`${p}attn_k.bias`, 'k_proj.bias', l, [kv], config.numKvHeads);
      need(`${p}attn_v.bias`, 'v_proj.bias', l, [kv]);
    }
    if (config.oBias) need(`${p}attn_output.bias`, 'o_proj.bias', l, [h]);
    if (config.qkNorm) {
      need(`${p}attn_q_norm.weight`, 'q_norm', l, [config.headDim]);
      need(`${p}attn_k_norm.weight`, 'k_norm', l, [config.headDim]);
    }
    need(`${p}ffn_norm.weight`, 'post_attention_layernorm', l, [h]);
    need(`${p}ffn_gate.weight`, 'gate_proj', l, [config.intermediateSize, h]);
    need(`${p}ffn_up.weight`, 'up_proj', l, [config.intermediateSize, h]);
    need(`${p}ffn_down.weight`, 'down_proj', l, [h, config.intermediateSize]);
  }
  need('output_norm.weight', 'norm', -1, [h]);
  if (!config.tieWordEmbeddings) need('output.weight', 'lm_head', -1, [config.vocabSize, h]);
  return plan;
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
