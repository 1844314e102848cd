/** GGUF metadata -> ModelConfig, tensor names -> native slots, quantized tensor planning, q/k row order. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelLoadError, UnsupportedModelError } from '../../src/index.js';
import { ggufModelConfig } from '../../src/model-files/gguf/config.js';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { readGgufFile, type GgufFile } from '../../src/model-files/gguf/reader.js';
import { hfRowOrder, planGgufWeights } from '../../src/model-files/gguf/weights.js';
import { encodeGguf, meta, tensorBytes, type GgufSpec, type MetaValue, type TensorSpec } from '../support/gguf-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-gguf-model-'));
let counter = 0;
const read = (spec: GgufSpec) => {
  const file = join(dir, `m${counter++}.gguf`);
  writeFileSync(file, encodeGguf(spec));
  return readGgufFile(file);
};

/** The load plan for the slots the native model reports for this file's config. */
function plan(gguf: GgufFile, interleaved: boolean) {
  const config = ggufModelConfig(gguf);
  const model = new (loadNativeBinding().CpuModel)({
    hidden: config.hiddenSize, layers: config.numLayers, heads: config.numHeads, kvHeads: config.numKvHeads, headDim: config.headDim,
    intermediate: config.intermediateSize, vocab: config.vocabSize, rmsEps: config.rmsNormEps, qkvBias: config.qkvBias, oBias: config.oBias,
    qkNorm: config.qkNorm, tiedEmbeddings: config.tieWordEmbeddings, slidingWindow: 0, invFreq: new Float64Array(config.headDim / 2).fill(1), threads: 1,
  });
  try {
    return planGgufWeights(model.weightSlots(), config, gguf, interleaved);
  } finally {
    model.dispose();
  }
}

const GGML = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8, Q4_K: 12, Q5_K: 13, Q6_K: 14, BF16: 30 } as const;

interface Shape { arch: string; hidden: number; layers: number; heads: number; kvHeads: number; headDim: number; ffn: number; vocab: number }

/** A model's header and tensors; `matrixType` for every matrix, vectors F32. */
function modelSpec(s: Shape, options: { matrixType?: number; tied?: boolean; extraMeta?: Array<[string, MetaValue]>; drop?: string } = {}): GgufSpec {
  const type = options.matrixType ?? GGML.F32;
  const q = s.heads * s.headDim;
  const kv = s.kvHeads * s.headDim;
  const tensors: TensorSpec[] = [];
  const add = (name: string, dims: number[], t = dims.length === 1 ? GGML.F32 : type) => {
    if (name !== options.drop) tensors.push({ name, type: t, dims, data: new Uint8Array(tensorBytes({ type: t, dims })) });
  };
  add('token_embd.weight', [s.hidden, s.vocab]);
  for (let l = 0; l < s.layers; l++) {
    add(`blk.${l}.attn_norm.weight`, [s.hidden]);
    add(`blk.${l}.attn_q.weight`, [s.hidden, q]);
    add(`blk.${l}.attn_k.weight`, [s.hidden, kv]);
    add(`blk.${l}.attn_v.weight`, [s.hidden, kv]);
    add(`blk.${l}.attn_output.weight`, [q, s.hidden]);
    if (s.arch === 'qwen2') for (const [p, n] of [['q', q], ['k', kv], ['v', kv]] as const) add(`blk.${l}.attn_${p}.bias`, [n]);
    if (s.arch === 'qwen3') for (const p of ['q', 'k']) add(`blk.${l}.attn_${p}_norm.weight`, [s.headDim]);
    add(`blk.${l}.ffn_norm.weight`, [s.hidden]);
    add(`blk.${l}.ffn_gate.weight`, [s.hidden, s.ffn]);
    add(`blk.${l}.ffn_up.weight`, [s.hidden, s.ffn]);
    add(`blk.${l}.ffn_down.weight`, [s.ffn, s.hidden]);
  }
  add('output_norm.weight', [s.hidden]);
  if (!options.tied) add('output.weight', [s.hidden, s.vocab]);
  const a = s.arch;
  return {
    metadata: [
      ['general.architecture', meta.str(a)],
      [`${a}.embedding_length`, meta.u32(s.hidden)],
      [`${a}.block_count`, meta.u32(s.layers)],
      [`${a}.attention.head_count`, meta.u32(s.heads)],
      [`${a}.attention.head_count_kv`, meta.u32(s.kvHeads)],
      [`${a}.attention.key_length`, meta.u32(s.headDim)],
      [`${a}.feed_forward_length`, meta.u32(s.ffn)],
      [`${a}.context_length`, meta.u32(40960)],
      [`${a}.rope.freq_base`, meta.f32(1_000_000)],
      [`${a}.attention.layer_norm_rms_epsilon`, meta.f32(1e-6)],
      ...(options.extraMeta ?? []),
    ],
    tensors,
  };
}

const qwen3: Shape = { arch: 'qwen3', hidden: 256, layers: 2, heads: 4, kvHeads: 2, headDim: 128, ffn: 512, vocab: 300 };

describe('GGUF model config', () => {
  it('reads a qwen3 header into the ModelConfig config.json would give', () => {
    const config = ggufModelConfig(read(modelSpec(qwen3, { tied: true })));
    expect(config).toEqual({
      architecture: 'Qwen3ForCausalLM',
      hiddenSize: 256,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 128,
      intermediateSize: 512,
      vocabSize: 300,
      rmsNormEps: Math.fround(1e-6),
      ropeTheta: 1_000_000,
      ropeScaling: null,
      tieWordEmbeddings: true,
      maxPositionEmbeddings: 40960,
      attentionBias: false,
      qkvBias: false,
      oBias: false,
      qkNorm: true,
      slidingWindow: null,
      dtype: null,
    });
  });

  it('llama, mistral and qwen2: head_dim defaults, biases, untied output, linear RoPE scaling', () => {
    const llama = ggufModelConfig(read(modelSpec({ ...qwen3, arch: 'llama', headDim: 64 }, {
      extraMeta: [['llama.rope.scaling.type', meta.str('linear')], ['llama.rope.scaling.factor', meta.f32(4)]],
    })));
    expect(llama).toMatchObject({ architecture: 'LlamaForCausalLM', headDim: 64, tieWordEmbeddings: false, qkNorm: false, ropeScaling: { type: 'linear', factor: 4 } });
    const qwen2 = ggufModelConfig(read(modelSpec({ ...qwen3, arch: 'qwen2' })));
    expect(qwen2).toMatchObject({ architecture: 'Qwen2ForCausalLM', qkvBias: true, oBias: false });
    const mistral = ggufModelConfig(read(modelSpec({ ...qwen3, arch: 'mistral' }, { extraMeta: [['mistral.attention.sliding_window', meta.u32(4096)]] })));
    expect(mistral).toMatchObject({ architecture: 'MistralForCausalLM', slidingWindow: 4096 });
  });

  it('refuses unknown architectures, MoE, YaRN, partial RoPE and inconsistent heads with typed errors', () => {
    expect(() => ggufModelConfig(read(modelSpec({ ...qwen3, arch: 'gemma3' })))).toThrow(UnsupportedModelError);
    expect(() => ggufModelConfig(read(modelSpec(qwen3, { extraMeta: [['qwen3.expert_count', meta.u32(8)]] })))).toThrow(/mixture of experts/);
    expect(() => ggufModelConfig(read(modelSpec(qwen3, { extraMeta: [['qwen3.rope.scaling.type', meta.str('yarn')]] })))).toThrow(/yarn/);
    expect(() => ggufModelConfig(read(modelSpec(qwen3, { extraMeta: [['qwen3.rope.dimension_count', meta.u32(64)]] })))).toThrow(/partial RoPE/);
    expect(() => ggufModelConfig(read(modelSpec({ ...qwen3, kvHeads: 3 })))).toThrow(ModelLoadError);
    const noArch = modelSpec(qwen3);
    noArch.metadata.shift();
    expect(() => ggufModelConfig(read(noArch))).toThrow(/general.architecture/);
    const wrongType = modelSpec(qwen3);
    wrongType.metadata[1] = ['qwen3.embedding_length', meta.str('256')];
    expect(() => ggufModelConfig(read(wrongType))).toThrow(/must be a finite number/);
  });
});

describe('GGUF load plan', () => {
  it('maps every tensor to its native slot with [rows, cols] shapes, offsets and sizes, for each quantized type', () => {
    for (const [name, id, blockElements, blockBytes] of [['Q8_0', GGML.Q8_0, 32, 34], ['Q4_0', GGML.Q4_0, 32, 18], ['Q4_K', GGML.Q4_K, 256, 144], ['Q6_K', GGML.Q6_K, 256, 210], ['F16', GGML.F16, 1, 2], ['BF16', GGML.BF16, 1, 2]] as const) {
      const gguf = read(modelSpec(qwen3, { matrixType: id, tied: true }));
      const planned = plan(gguf, false);
      expect(planned.map((t) => `${t.kind}@${t.layer}:${t.info.name}`)).toEqual([
        'embed_tokens@-1:token_embd.weight',
        'norm@-1:output_norm.weight',
        ...[0, 1].flatMap((l) =>
          [['input_layernorm', 'attn_norm.weight'], ['q_proj', 'attn_q.weight'], ['k_proj', 'attn_k.weight'], ['v_proj', 'attn_v.weight'], ['o_proj', 'attn_output.weight'],
           ['q_norm', 'attn_q_norm.weight'], ['k_norm', 'attn_k_norm.weight'], ['post_attention_layernorm', 'ffn_norm.weight'], ['gate_proj', 'ffn_gate.weight'],
           ['up_proj', 'ffn_up.weight'], ['down_proj', 'ffn_down.weight']].map(([k, n]) => `${k}@${l}:blk.${l}.${n}`)),
      ]);
      const q = planned.find((t) => t.kind === 'q_proj' && t.layer === 1)!;
      const tensor = gguf.tensors.get('blk.1.attn_q.weight')!;
      expect(q.info).toEqual({ name: 'blk.1.attn_q.weight', file: gguf.file, dtype: name, shape: [512, 256], offset: tensor.offset, byteLength: (512 * 256 / blockElements) * blockBytes });
      expect(planned.find((t) => t.kind === 'down_proj')!.info.shape).toEqual([256, 512]);
      expect(planned.find((t) => t.kind === 'q_norm')!.info).toMatchObject({ dtype: 'F32', shape: [128], byteLength: 512 });
      for (const t of planned) expect(t.info.offset % 32).toBe(0);
      expect(planned.some((t) => t.headPermutation)).toBe(false);
    }
  });

  it('marks llama q/k (weights and biases) for head-row reordering, and nothing else', () => {
    const gguf = read(modelSpec({ ...qwen3, arch: 'llama', headDim: 64 }));
    const planned = plan(gguf, true);
    const marked = planned.filter((t) => t.headPermutation).map((t) => [t.kind, t.headPermutation!.heads, t.headPermutation!.headDim]);
    expect(marked).toEqual([['q_proj', 4, 64], ['k_proj', 2, 64], ['q_proj', 4, 64], ['k_proj', 2, 64]]);
    expect(planned.find((t) => t.kind === 'lm_head')!.info.name).toBe('output.weight');
  });

  it('refuses types weft cannot load, quantized norms, wrong dims and missing tensors', () => {
    const q5 = read(modelSpec(qwen3, { matrixType: GGML.Q5_K }));
    expect(() => plan(q5, false)).toThrow(/tensor type Q5_K is not supported/);
    const quantNorm = modelSpec(qwen3);
    const norm = quantNorm.tensors.find((t) => t.name === 'blk.0.attn_q_norm.weight')!;
    norm.type = GGML.Q8_0;
    norm.data = new Uint8Array(tensorBytes(norm));
    const qn = read(quantNorm);
    expect(() => plan(qn, false)).toThrow(UnsupportedModelError);
    const missing = read(modelSpec(qwen3, { drop: 'blk.1.ffn_up.weight' }));
    expect(() => plan(missing, false)).toThrow(/blk.1.ffn_up.weight is missing/);
    const wrong = modelSpec(qwen3);
    const up = wrong.tensors.find((t) => t.name === 'blk.0.ffn_up.weight')!;
    up.dims = [256, 256];
    up.data = new Uint8Array(tensorBytes(up));
    const w = read(wrong);
    expect(() => plan(w, false)).toThrow(/GGUF dims \[256,256\], expected \[256,512\]/);
  });

  it('hfRowOrder undoes llama.cpp\'s permutation (reshape(h, 2, d/2).swap(1, 2))', () => {
    for (const [heads, headDim] of [[1, 2], [3, 8], [2, 128]] as const) {
      const n = heads * headDim;
      // llama.cpp's converter: GGUF row (h, i, s) = HF row (h, s, i).
      const toGguf = new Int32Array(n);
      for (let h = 0; h < heads; h++) for (let s = 0; s < 2; s++) for (let i = 0; i < headDim / 2; i++) toGguf[h * headDim + i * 2 + s] = h * headDim + s * (headDim / 2) + i;
      const order = hfRowOrder(heads, headDim);
      for (let r = 0; r < n; r++) expect(toGguf[order[r]!]).toBe(r);
    }
  });
});
