/**
 * Converts a Qwen3.5 folder (config.json + float32 safetensors, either layout)
 * to a `qwen35` GGUF laid out as llama.cpp's converter writes it
 * (tools/hybrid/NOTES.md section 8, written from reading conversion/qwen.py;
 * none of its code): llama.cpp names, norms stored as 1 + w (all but the gated
 * one), A = -exp(A_log), the depthwise conv squeezed to [channels, taps],
 * value heads moved from HF's grouped order to ggml's tiled order along every
 * per-value-head axis, 1-D tensors, norms and the conv in F32, the other
 * matrices at `matrixType` (Q8_0 rows that are not whole blocks fall back to
 * F16, as the converter does). The vision tower and mtp.* are left out. No tokenizer
 * unless `extraMeta` brings one.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseModelConfig } from '../../src/model-files/config.js';
import { readAllTensors, writeSafetensors, type RawTensor } from '../model-files/safetensors-writer.js';
import { fromQ8_0, toF16, toQ8_0 } from './ggml-quantize.js';
import { encodeGguf, meta, type MetaValue, type TensorSpec } from './gguf-writer.js';
import type { MatrixType } from './hf-to-gguf.js';

const LAYER: Array<[RegExp, string]> = [
  [/^input_layernorm\.weight$/, 'attn_norm.weight'],
  [/^post_attention_layernorm\.weight$/, 'post_attention_norm.weight'],
  [/^self_attn\.q_proj\.weight$/, 'attn_q.weight'],
  [/^self_attn\.k_proj\.weight$/, 'attn_k.weight'],
  [/^self_attn\.v_proj\.weight$/, 'attn_v.weight'],
  [/^self_attn\.o_proj\.weight$/, 'attn_output.weight'],
  [/^self_attn\.q_norm\.weight$/, 'attn_q_norm.weight'],
  [/^self_attn\.k_norm\.weight$/, 'attn_k_norm.weight'],
  [/^linear_attn\.in_proj_qkv\.weight$/, 'attn_qkv.weight'],
  [/^linear_attn\.in_proj_z\.weight$/, 'attn_gate.weight'],
  [/^linear_attn\.in_proj_b\.weight$/, 'ssm_beta.weight'],
  [/^linear_attn\.in_proj_a\.weight$/, 'ssm_alpha.weight'],
  [/^linear_attn\.conv1d\.weight$/, 'ssm_conv1d.weight'],
  [/^linear_attn\.dt_bias$/, 'ssm_dt.bias'],
  [/^linear_attn\.A_log$/, 'ssm_a'],
  [/^linear_attn\.norm\.weight$/, 'ssm_norm.weight'],
  [/^linear_attn\.out_proj\.weight$/, 'ssm_out.weight'],
  [/^mlp\.gate_proj\.weight$/, 'ffn_gate.weight'],
  [/^mlp\.up_proj\.weight$/, 'ffn_up.weight'],
  [/^mlp\.down_proj\.weight$/, 'ffn_down.weight'],
];

/** Grouped -> tiled value heads along the rows of a [rows, cols] array, from row `first` on, `block` rows per head. */
function tileRows(values: Float32Array, cols: number, first: number, block: number, keyHeads: number, valueHeads: number): Float32Array {
  const r = valueHeads / keyHeads;
  const out = values.slice();
  const size = block * cols;
  for (let g = 0; g < keyHeads; g++)
    for (let j = 0; j < r; j++) {
      const from = first * cols + (g * r + j) * size;
      out.set(values.subarray(from, from + size), first * cols + (j * keyHeads + g) * size);
    }
  return out;
}

/** The same along the columns (`block` columns per head) of every row. */
function tileCols(values: Float32Array, rows: number, block: number, keyHeads: number, valueHeads: number): Float32Array {
  const r = valueHeads / keyHeads;
  const cols = values.length / rows;
  const out = values.slice();
  for (let row = 0; row < rows; row++)
    for (let g = 0; g < keyHeads; g++)
      for (let j = 0; j < r; j++) {
        const from = row * cols + (g * r + j) * block;
        out.set(values.subarray(from, from + block), row * cols + (j * keyHeads + g) * block);
      }
  return out;
}

/**
 * The ggml type the converter stores a tensor in (0 F32, 1 F16, 8 Q8_0): floats for vectors, norms,
 * the conv and a mixture of experts' routers (ffn_gate_inp, ffn_gate_inp_shexp).
 */
export function storedType(ggufName: string, shape: readonly number[], matrixType: MatrixType): number {
  const float32 = shape.length === 1 || ggufName.endsWith('_norm.weight') || ggufName.endsWith('ssm_conv1d.weight') || !ggufName.endsWith('.weight') ||
    ggufName.includes('ffn_gate_inp');
  const type = float32 || matrixType === 'F32' ? 0 : matrixType === 'F16' ? 1 : 8;
  return type === 8 && shape[shape.length - 1]! % 32 !== 0 ? 1 : type;
}

/**
 * The safetensors twin of a converted file: the same folder with every matrix
 * rounded as the GGUF stores it (F16 ones as F16, Q8_0 ones as the float32 of
 * their dequantized blocks), in HF's layout. Rounding commutes with the
 * converter's reorders (rows are whole blocks; out_proj's column moves keep a
 * block's values, so its scale), so a backend should run the twin exactly as
 * it runs the GGUF.
 */
export async function writeRoundedTwin(dir: string, outDir: string, matrixType: MatrixType): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  copyFileSync(join(dir, 'config.json'), join(outDir, 'config.json'));
  const out: RawTensor[] = [];
  for (const t of await readAllTensors(join(dir, 'model.safetensors'))) {
    const values = new Float32Array(t.data.slice().buffer);
    const router = t.name.endsWith('mlp.gate.weight') || t.name.endsWith('shared_expert_gate.weight');
    const matrix = t.shape.length === 2 && t.name.endsWith('.weight') && !t.name.endsWith('norm.weight') && !router;
    const type = matrix ? storedType('x.weight', t.shape, matrixType) : 0;
    if (type === 1) out.push({ ...t, dtype: 'F16', data: toF16(values) });
    else if (type === 8) out.push({ ...t, data: new Uint8Array(fromQ8_0(toQ8_0(values)).buffer) });
    else out.push(t);
  }
  writeSafetensors(join(outDir, 'model.safetensors'), out);
}

/** `extraMeta` adds keys or replaces the converter's; a null value removes one (tests of broken files). */
export async function convertQwen35ToGguf(dir: string, file: string, matrixType: MatrixType = 'F32', extraMeta: Array<[string, MetaValue | null]> = []): Promise<void> {
  const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, any>;
  const config = parseModelConfig(json);
  const linear = config.linearAttention;
  if (!linear) throw new Error(`${dir} is not a Qwen3.5 model`);
  const text = (json.text_config ?? json) as Record<string, any>;
  const prefix = config.weightPrefix ?? 'model.';
  const { numKeyHeads: hk, numValueHeads: hv, keyHeadDim: dk, valueHeadDim: dv } = linear;
  const keyChannels = 2 * hk * dk;

  // The converter writes full_attention_interval (4 when config.json has none); check the layers follow it.
  const interval = (text.full_attention_interval as number | undefined) ?? 4;
  linear.layers.forEach((isLinear, i) => {
    if (isLinear !== ((i + 1) % interval !== 0)) throw new Error(`layer ${i}'s type does not follow full_attention_interval ${interval}: GGUF cannot say so`);
  });

  const tensors: TensorSpec[] = [];
  for (const t of await readAllTensors(join(dir, 'model.safetensors'))) {
    if (t.name.startsWith('model.visual.') || t.name.startsWith('mtp.')) continue;
    if (t.dtype !== 'F32') throw new Error(`${t.name}: convertQwen35ToGguf takes F32 tensors`);
    if (t.name === 'lm_head.weight' && config.tieWordEmbeddings) continue;
    let values: Float32Array = new Float32Array(t.data.slice().buffer);
    let shape = [...t.shape];
    let name: string;
    let local = '';
    if (t.name === 'lm_head.weight') name = 'output.weight';
    else if (t.name === `${prefix}embed_tokens.weight`) name = 'token_embd.weight';
    else if (t.name === `${prefix}norm.weight`) name = 'output_norm.weight';
    else {
      const m = t.name.slice(prefix.length).match(/^layers\.(\d+)\.(.+)$/);
      const rule = m && LAYER.find(([re]) => re.test(m[2]!));
      if (!m || !rule) throw new Error(`no GGUF name for ${t.name}`);
      local = m[2]!;
      name = `blk.${m[1]}.${rule[1]}`;
    }
    // (1 + w) norms are stored with the 1 added; the gated norm is not.
    if (t.name.endsWith('norm.weight') && !t.name.endsWith('linear_attn.norm.weight')) values = values.map((w) => w + 1);
    if (local === 'linear_attn.A_log') values = values.map((a) => -Math.exp(a));
    if (local === 'linear_attn.conv1d.weight') shape = [shape[0]!, shape[2]!];
    if (hk !== hv) {
      const cols = shape.length === 2 ? shape[1]! : 1;
      if (local === 'linear_attn.in_proj_qkv.weight' || local === 'linear_attn.conv1d.weight') values = tileRows(values, cols, keyChannels, dv, hk, hv);
      else if (local === 'linear_attn.in_proj_z.weight') values = tileRows(values, cols, 0, dv, hk, hv);
      else if (/^linear_attn\.(in_proj_[ab]\.weight|dt_bias|A_log)$/.test(local)) values = tileRows(values, cols, 0, 1, hk, hv);
      else if (local === 'linear_attn.out_proj.weight') values = tileCols(values, shape[0]!, dv, hk, hv);
    }
    const type = storedType(name, shape, matrixType);
    const data = type === 0 ? new Uint8Array(values.buffer) : type === 1 ? toF16(values) : toQ8_0(values);
    tensors.push({ name, type, dims: [...shape].reverse(), data });
  }

  const rope = text.rope_parameters ?? {};
  const sections = [...((rope.mrope_section as number[] | undefined) ?? [11, 11, 10]), 0, 0, 0, 0].slice(0, 4);
  const a = 'qwen35';
  const metadata: Array<[string, MetaValue]> = [
      ['general.architecture', meta.str(a)],
      ['general.file_type', meta.u32(matrixType === 'F32' ? 0 : matrixType === 'F16' ? 1 : 7)],
      [`${a}.block_count`, meta.u32(config.numLayers)],
      [`${a}.context_length`, meta.u32(config.maxPositionEmbeddings)],
      [`${a}.embedding_length`, meta.u32(config.hiddenSize)],
      [`${a}.feed_forward_length`, meta.u32(config.intermediateSize)],
      [`${a}.attention.head_count`, meta.u32(config.numHeads)],
      [`${a}.attention.head_count_kv`, meta.u32(config.numKvHeads)],
      [`${a}.rope.freq_base`, meta.f32(config.ropeTheta)],
      [`${a}.attention.layer_norm_rms_epsilon`, meta.f32(config.rmsNormEps)],
      [`${a}.attention.key_length`, meta.u32(config.headDim)],
      [`${a}.attention.value_length`, meta.u32(config.headDim)],
      [`${a}.ssm.conv_kernel`, meta.u32(linear.convKernel)],
      [`${a}.ssm.state_size`, meta.u32(dk)],
      [`${a}.ssm.group_count`, meta.u32(hk)],
      [`${a}.ssm.time_step_rank`, meta.u32(hv)],
      [`${a}.ssm.inner_size`, meta.u32(hv * dv)],
      [`${a}.full_attention_interval`, meta.u32(interval)],
      [`${a}.rope.dimension_count`, meta.u32(config.rotaryDim ?? config.headDim)],
      [`${a}.rope.dimension_sections`, meta.i32s(sections)],
  ];
  const edits = new Map(extraMeta);
  const kept = metadata.filter(([key]) => !edits.has(key));
  for (const [key, value] of extraMeta) if (value !== null) kept.push([key, value]);
  writeFileSync(file, encodeGguf({ metadata: kept, tensors }));
}
