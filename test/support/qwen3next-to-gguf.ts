/**
 * Converts a Qwen3-Next folder (config.json + float32 safetensors) to a
 * `qwen3next` GGUF laid out as llama.cpp's converter writes it
 * (tools/hybrid/NOTES.md section 8, written from reading conversion/qwen.py;
 * none of its code). Beyond what qwen35 files share (names, 1 + w norms,
 * A = -exp(A_log), the squeezed conv, float vectors and norms):
 * - the fused in_proj_qkvz, per key head [q | k | v | z], is split into
 *   attn_qkv ([all q | all k | all v]) and attn_gate (all z); in_proj_ba stays
 *   fused as ssm_ba; value heads keep HF's grouped order (no tiling);
 * - the routed experts are stacked into one 3-D tensor per projection
 *   (ffn_{gate,up,down}_exps, expert outermost); the router (ffn_gate_inp) and
 *   the shared expert's gate (ffn_gate_inp_shexp) stay F32.
 * No tokenizer unless `extraMeta` brings one (its keys replace the converter's).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseModelConfig } from '../../src/model-files/config.js';
import { readAllTensors } from '../model-files/safetensors-writer.js';
import { toF16, toQ8_0 } from './ggml-quantize.js';
import { encodeGguf, meta, type MetaValue, type TensorSpec } from './gguf-writer.js';
import type { MatrixType } from './hf-to-gguf.js';
import { storedType } from './qwen35-to-gguf.js';

const LAYER: Array<[RegExp, string]> = [
  [/^input_layernorm\.weight$/, 'attn_norm.weight'],
  [/^post_attention_layernorm\.weight$/, 'post_attention_norm.weight'],
  [/^self_attn\.q_proj\.weight$/, 'attn_q.weight'],
  [/^self_attn\.k_proj\.weight$/, 'attn_k.weight'],
  [/^self_attn\.v_proj\.weight$/, 'attn_v.weight'],
  [/^self_attn\.o_proj\.weight$/, 'attn_output.weight'],
  [/^self_attn\.q_norm\.weight$/, 'attn_q_norm.weight'],
  [/^self_attn\.k_norm\.weight$/, 'attn_k_norm.weight'],
  [/^linear_attn\.in_proj_ba\.weight$/, 'ssm_ba.weight'],
  [/^linear_attn\.conv1d\.weight$/, 'ssm_conv1d.weight'],
  [/^linear_attn\.dt_bias$/, 'ssm_dt.bias'],
  [/^linear_attn\.A_log$/, 'ssm_a'],
  [/^linear_attn\.norm\.weight$/, 'ssm_norm.weight'],
  [/^linear_attn\.out_proj\.weight$/, 'ssm_out.weight'],
  [/^mlp\.gate\.weight$/, 'ffn_gate_inp.weight'],
  [/^mlp\.shared_expert\.gate_proj\.weight$/, 'ffn_gate_shexp.weight'],
  [/^mlp\.shared_expert\.up_proj\.weight$/, 'ffn_up_shexp.weight'],
  [/^mlp\.shared_expert\.down_proj\.weight$/, 'ffn_down_shexp.weight'],
  [/^mlp\.shared_expert_gate\.weight$/, 'ffn_gate_inp_shexp.weight'],
  [/^mlp\.gate_proj\.weight$/, 'ffn_gate.weight'],
  [/^mlp\.up_proj\.weight$/, 'ffn_up.weight'],
  [/^mlp\.down_proj\.weight$/, 'ffn_down.weight'],
];

function encode(name: string, values: Float32Array, shape: number[], matrixType: MatrixType): TensorSpec {
  const type = storedType(name, shape, matrixType);
  const data = type === 0 ? new Uint8Array(values.buffer, values.byteOffset, values.byteLength) : type === 1 ? toF16(values) : toQ8_0(values);
  return { name, type, dims: [...shape].reverse(), data };
}

export async function convertQwen3NextToGguf(dir: string, file: string, matrixType: MatrixType = 'F32', extraMeta: Array<[string, MetaValue]> = []): Promise<void> {
  const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, any>;
  const config = parseModelConfig(json);
  const linear = config.linearAttention;
  const moe = config.mixtureOfExperts;
  if (config.architecture !== 'Qwen3NextForCausalLM' || !linear || !moe) throw new Error(`${dir} is not a Qwen3-Next model`);
  const { numKeyHeads: hk, numValueHeads: hv, keyHeadDim: dk, valueHeadDim: dv } = linear;
  const interval = (json.full_attention_interval as number | undefined) ?? 4;
  linear.layers.forEach((isLinear, i) => {
    if (isLinear !== ((i + 1) % interval !== 0)) throw new Error(`layer ${i}'s type does not follow full_attention_interval ${interval}: GGUF cannot say so`);
  });

  const tensors: TensorSpec[] = [];
  const experts = new Map<string, Float32Array[]>(); // "blk.L.ffn_gate_exps.weight" -> per expert
  const expertShapes = new Map<string, number[]>();
  for (const t of await readAllTensors(join(dir, 'model.safetensors'))) {
    if (t.name.startsWith('mtp.')) continue;
    if (t.dtype !== 'F32') throw new Error(`${t.name}: convertQwen3NextToGguf takes F32 tensors`);
    if (t.name === 'lm_head.weight' && config.tieWordEmbeddings) continue;
    let values: Float32Array = new Float32Array(t.data.slice().buffer);
    let shape = [...t.shape];
    if (t.name.endsWith('norm.weight') && !t.name.endsWith('linear_attn.norm.weight')) values = values.map((w) => w + 1);
    if (t.name === 'lm_head.weight') tensors.push(encode('output.weight', values, shape, matrixType));
    else if (t.name === 'model.embed_tokens.weight') tensors.push(encode('token_embd.weight', values, shape, matrixType));
    else if (t.name === 'model.norm.weight') tensors.push(encode('output_norm.weight', values, shape, matrixType));
    else {
      const m = t.name.match(/^model\.layers\.(\d+)\.(.+)$/);
      if (!m) throw new Error(`no GGUF name for ${t.name}`);
      const [, layer, local] = m as unknown as [string, string, string];
      const expert = local.match(/^mlp\.experts\.(\d+)\.(gate|up|down)_proj\.weight$/);
      if (expert) {
        const name = `blk.${layer}.ffn_${expert[2]}_exps.weight`;
        if (!experts.has(name)) experts.set(name, []);
        experts.get(name)![Number(expert[1])] = values;
        expertShapes.set(name, shape);
        continue;
      }
      if (local === 'linear_attn.in_proj_qkvz.weight') {
        // Rows per key head g: [q_g (dk) | k_g (dk) | v_g (r*dv) | z_g (r*dv)] -> [all q | all k | all v] and [all z].
        const cols = shape[1]!;
        const vz = (hv / hk) * dv;
        const group = 2 * dk + 2 * vz;
        const qkv = new Float32Array(hk * (2 * dk + vz) * cols);
        const z = new Float32Array(hk * vz * cols);
        const rows = (g: number, from: number, count: number) => values.subarray((g * group + from) * cols, (g * group + from + count) * cols);
        for (let g = 0; g < hk; g++) {
          qkv.set(rows(g, 0, dk), g * dk * cols);
          qkv.set(rows(g, dk, dk), (hk * dk + g * dk) * cols);
          qkv.set(rows(g, 2 * dk, vz), (2 * hk * dk + g * vz) * cols);
          z.set(rows(g, 2 * dk + vz, vz), g * vz * cols);
        }
        tensors.push(encode(`blk.${layer}.attn_qkv.weight`, qkv, [hk * (2 * dk + vz), cols], matrixType));
        tensors.push(encode(`blk.${layer}.attn_gate.weight`, z, [hk * vz, cols], matrixType));
        continue;
      }
      const rule = LAYER.find(([re]) => re.test(local));
      if (!rule) throw new Error(`no GGUF name for ${t.name}`);
      if (local === 'linear_attn.A_log') values = values.map((a) => -Math.exp(a));
      if (local === 'linear_attn.conv1d.weight') shape = [shape[0]!, shape[2]!];
      tensors.push(encode(`blk.${layer}.${rule[1]}`, values, shape, matrixType));
    }
  }
  for (const [name, perExpert] of experts) {
    const [rows, cols] = expertShapes.get(name)!;
    if (perExpert.length !== moe.numExperts || perExpert.some((e) => e === undefined)) throw new Error(`${name}: not every expert is in the folder`);
    const stacked = new Float32Array(moe.numExperts * rows! * cols!);
    perExpert.forEach((e, i) => stacked.set(e, i * rows! * cols!));
    const t = encode(name, stacked, [rows!, cols!], matrixType); // quantized per row, as the 2-D type rule decides
    tensors.push({ ...t, dims: [cols!, rows!, moe.numExperts] });
  }

  const a = 'qwen3next';
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
    [`${a}.expert_count`, meta.u32(moe.numExperts)],
    [`${a}.expert_used_count`, meta.u32(moe.expertsPerToken)],
    [`${a}.expert_feed_forward_length`, meta.u32(moe.expertIntermediateSize)],
    [`${a}.expert_shared_feed_forward_length`, meta.u32(moe.sharedExpertIntermediateSize)],
    [`${a}.ssm.conv_kernel`, meta.u32(linear.convKernel)],
    [`${a}.ssm.state_size`, meta.u32(dk)],
    [`${a}.ssm.group_count`, meta.u32(hk)],
    [`${a}.ssm.time_step_rank`, meta.u32(hv)],
    [`${a}.ssm.inner_size`, meta.u32(hv * dv)],
    [`${a}.full_attention_interval`, meta.u32(interval)],
    [`${a}.rope.dimension_count`, meta.u32(config.rotaryDim ?? config.headDim)],
  ];
  const replaced = new Set(extraMeta.map(([key]) => key));
  writeFileSync(file, encodeGguf({ metadata: [...metadata.filter(([key]) => !replaced.has(key)), ...extraMeta], tensors }));
}
