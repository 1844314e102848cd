/**
 * Converts a Hugging Face folder (config.json + float32 safetensors) to GGUF
 * the way llama.cpp's convert_hf_to_gguf.py lays it out: llama.cpp tensor
 * names, dims innermost first, `{arch}.*` metadata, and for the llama
 * architecture q/k rows permuted to adjacent-pair RoPE order
 * (reshape(heads, 2, d/2, cols).swapaxes(1, 2)). No tokenizer.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseModelConfig } from '../../src/model-files/config.js';
import { readAllTensors } from '../model-files/safetensors-writer.js';
import { toF16, toQ8_0 } from './ggml-quantize.js';
import { encodeGguf, meta, type MetaValue, type TensorSpec } from './gguf-writer.js';

const ARCH: Record<string, string> = { LlamaForCausalLM: 'llama', MistralForCausalLM: 'llama', Qwen2ForCausalLM: 'qwen2', Qwen3ForCausalLM: 'qwen3' };

const NAMES: Array<[RegExp, string]> = [
  [/^model\.embed_tokens\.weight$/, 'token_embd.weight'],
  [/^model\.norm\.weight$/, 'output_norm.weight'],
  [/^lm_head\.weight$/, 'output.weight'],
  [/^model\.layers\.(\d+)\.input_layernorm\.weight$/, 'blk.$1.attn_norm.weight'],
  [/^model\.layers\.(\d+)\.post_attention_layernorm\.weight$/, 'blk.$1.ffn_norm.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.q_proj\.(weight|bias)$/, 'blk.$1.attn_q.$2'],
  [/^model\.layers\.(\d+)\.self_attn\.k_proj\.(weight|bias)$/, 'blk.$1.attn_k.$2'],
  [/^model\.layers\.(\d+)\.self_attn\.v_proj\.(weight|bias)$/, 'blk.$1.attn_v.$2'],
  [/^model\.layers\.(\d+)\.self_attn\.o_proj\.(weight|bias)$/, 'blk.$1.attn_output.$2'],
  [/^model\.layers\.(\d+)\.self_attn\.q_norm\.weight$/, 'blk.$1.attn_q_norm.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.k_norm\.weight$/, 'blk.$1.attn_k_norm.weight'],
  [/^model\.layers\.(\d+)\.mlp\.gate_proj\.weight$/, 'blk.$1.ffn_gate.weight'],
  [/^model\.layers\.(\d+)\.mlp\.up_proj\.weight$/, 'blk.$1.ffn_up.weight'],
  [/^model\.layers\.(\d+)\.mlp\.down_proj\.weight$/, 'blk.$1.ffn_down.weight'],
];

/** llama.cpp's permute for q/k rows (weights [rows, cols] or biases [rows]). */
function permuteRows(values: Float32Array, rows: number, heads: number): Float32Array {
  const cols = values.length / rows;
  const headDim = rows / heads;
  const out = new Float32Array(values.length);
  for (let h = 0; h < heads; h++)
    for (let s = 0; s < 2; s++)
      for (let i = 0; i < headDim / 2; i++) {
        const from = h * headDim + s * (headDim / 2) + i;
        const to = h * headDim + 2 * i + s;
        out.set(values.subarray(from * cols, (from + 1) * cols), to * cols);
      }
  return out;
}

export type MatrixType = 'F32' | 'F16' | 'Q8_0';

export async function convertHfToGguf(dir: string, file: string, matrixType: MatrixType = 'F32', extraMeta: Array<[string, MetaValue]> = []): Promise<void> {
  const configJson = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const config = parseModelConfig(configJson);
  const arch = ARCH[config.architecture]!;
  const tensors: TensorSpec[] = [];
  for (const t of await readAllTensors(join(dir, 'model.safetensors'))) {
    if (t.dtype !== 'F32') throw new Error(`${t.name}: convertHfToGguf takes F32 tensors`);
    if (t.name === 'lm_head.weight' && config.tieWordEmbeddings) continue;
    // A base-model folder (Qwen3Model, as sentence-transformers saves an embedder) names its weights without `model.`.
    const hfName = config.baseModel && !t.name.startsWith('model.') ? `model.${t.name}` : t.name;
    const rule = NAMES.find(([re]) => re.test(hfName));
    if (!rule) throw new Error(`no GGUF name for ${t.name}`);
    const name = hfName.replace(rule[0], rule[1]);
    let values: Float32Array = new Float32Array(t.data.slice().buffer);
    const heads = /attn_q\./.test(name) ? config.numHeads : /attn_k\./.test(name) ? config.numKvHeads : 0;
    if (arch === 'llama' && heads > 0) values = permuteRows(values, t.shape[0]!, heads);
    const matrix = t.shape.length === 2;
    const type = !matrix || matrixType === 'F32' ? 0 : matrixType === 'F16' ? 1 : 8;
    const data = type === 0 ? new Uint8Array(values.buffer) : type === 1 ? toF16(values) : toQ8_0(values);
    tensors.push({ name, type, dims: [...t.shape].reverse(), data });
  }
  const rope: Array<[string, MetaValue]> = [];
  if (config.ropeScaling?.type === 'linear')
    rope.push([`${arch}.rope.scaling.type`, meta.str('linear')], [`${arch}.rope.scaling.factor`, meta.f32(config.ropeScaling.factor)]);
  else if (config.ropeScaling) throw new Error('convertHfToGguf: only linear RoPE scaling');
  writeFileSync(file, encodeGguf({
    metadata: [
      ['general.architecture', meta.str(arch)],
      [`${arch}.embedding_length`, meta.u32(config.hiddenSize)],
      [`${arch}.block_count`, meta.u32(config.numLayers)],
      [`${arch}.attention.head_count`, meta.u32(config.numHeads)],
      [`${arch}.attention.head_count_kv`, meta.u32(config.numKvHeads)],
      [`${arch}.attention.key_length`, meta.u32(config.headDim)],
      [`${arch}.attention.value_length`, meta.u32(config.headDim)],
      [`${arch}.rope.dimension_count`, meta.u32(config.headDim)],
      [`${arch}.feed_forward_length`, meta.u32(config.intermediateSize)],
      [`${arch}.context_length`, meta.u32(config.maxPositionEmbeddings)],
      [`${arch}.rope.freq_base`, meta.f32(config.ropeTheta)],
      [`${arch}.attention.layer_norm_rms_epsilon`, meta.f32(config.rmsNormEps)],
      ...rope,
      ...extraMeta,
    ],
    tensors,
  }));
}
