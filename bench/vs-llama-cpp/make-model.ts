/**
 * Writes the benchmark's GGUF: Qwen3 architecture with seeded random weights
 * and a real byte-level BPE vocabulary (vocabulary.ts), in F16, Q8_0 or Q4_K_M.
 * The same seed gives the same weights in every format (quantized from the
 * same float32 values), so both sides and all formats share one model.
 *
 *   tsx bench/vs-llama-cpp/make-model.ts [--quick] [--hybrid] [--type F16|Q8_0|Q4_K_M] [--dequantized] [--out file.gguf]
 *
 * Full shape = Qwen3-0.6B: hidden 1024, 28 layers, 16/8 heads, head_dim 128,
 * FFN 3072, vocab 151,936, tied embeddings. --quick: hidden 256, 4 layers,
 * 4/2 heads, head_dim 64, FFN 768, vocab 32,000.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fromQ4_K, fromQ6_K, fromQ8_0, toF16, toQ4_K, toQ6_K, toQ8_0 } from '../../test/support/ggml-quantize.js';
import { meta, writeGgufStreaming, type GgufSpec, type TensorSpec } from '../../test/support/gguf-writer.js';
import { buildVocabulary } from './vocabulary.js';

export interface BenchShape {
  name: string;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  ffn: number;
  vocab: number;
  merges: number;
}

export const FULL: BenchShape = { name: 'qwen3-0.6b-shape', hidden: 1024, layers: 28, heads: 16, kvHeads: 8, headDim: 128, ffn: 3072, vocab: 151_936, merges: 151_387 };
export const QUICK: BenchShape = { name: 'quick-shape', hidden: 256, layers: 4, heads: 4, kvHeads: 2, headDim: 64, ffn: 768, vocab: 32_000, merges: 31_600 };

/**
 * A hybrid (Qwen3.5, GGUF architecture qwen35) of the same shape: every 4th
 * layer gated full attention (q rows per head [query | gate]), the others
 * Gated DeltaNet with Qwen3.5's linear heads (16 key and 16 value heads of
 * 128, conv kernel 4), RoPE over a quarter of each head. Written as llama.cpp's
 * converter lays qwen35 out (tools/hybrid/NOTES.md section 8).
 */
export interface HybridShape extends BenchShape {
  linKeyHeads: number;
  linValueHeads: number;
  linDim: number;
  conv: number;
}
export const FULL_HYBRID: HybridShape = { ...FULL, name: 'qwen35-0.6b-shape', linKeyHeads: 16, linValueHeads: 16, linDim: 128, conv: 4 };
export const QUICK_HYBRID: HybridShape = { ...QUICK, name: 'qwen35-quick-shape', linKeyHeads: 2, linValueHeads: 4, linDim: 64, conv: 4 };
const isHybrid = (s: BenchShape): s is HybridShape => 'linDim' in s;

/**
 * Qwen3-Next (GGUF architecture qwen3next) of a hybrid shape: the same layers with b and a fused
 * in ssm_ba (per key head [b | a]), and every MLP a mixture of experts (softmax router over
 * `experts`, `expertsUsed` chosen and renormalised, plus a sigmoid-gated shared expert), the
 * routed experts stacked per projection (tools/hybrid/NOTES.md section 8).
 */
export interface NextShape extends HybridShape {
  experts: number;
  expertsUsed: number;
  expertFfn: number;
  sharedFfn: number;
}
export const QUICK_NEXT: NextShape = { ...QUICK_HYBRID, name: 'qwen3next-quick-shape', experts: 8, expertsUsed: 2, expertFfn: 64, sharedFfn: 128 };
const isNext = (s: BenchShape): s is NextShape => 'experts' in s;

export type WeightType = 'F16' | 'Q8_0' | 'Q4_K_M';
const FILE_TYPE: Record<WeightType, number> = { F16: 1, Q8_0: 7, Q4_K_M: 15 };
const GGML = { F32: 0, F16: 1, Q8_0: 8, Q4_K: 12, Q6_K: 14 } as const;

/**
 * The ggml type of each matrix. Q4_K_M mixes as llama.cpp's quantizer does
 * (llama_tensor_get_type): the output matrix (here the tied token_embd) in
 * Q6_K, attn_v and ffn_down in Q6_K on the layers where use_more_bits holds
 * (the first and last eighth, and every third in between), the rest Q4_K.
 */
function matrixType(type: WeightType, name: string, layers: number): number {
  if (type === 'F16') return GGML.F16;
  if (type === 'Q8_0') return GGML.Q8_0;
  if (name === 'token_embd.weight') return GGML.Q6_K;
  const layer = /^blk\.(\d+)\.(attn_v|ffn_down)\./.exec(name);
  if (layer) {
    const i = Number(layer[1]);
    const moreBits = i < layers / 8 || i >= (7 * layers) / 8 || (i - Math.floor(layers / 8)) % 3 === 2;
    return moreBits ? GGML.Q6_K : GGML.Q4_K;
  }
  return GGML.Q4_K;
}

const ENCODE: Record<number, (values: Float32Array) => Uint8Array> = {
  [GGML.F16]: toF16,
  [GGML.Q8_0]: toQ8_0,
  [GGML.Q4_K]: toQ4_K,
  [GGML.Q6_K]: toQ6_K,
};

const CHAT_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/** FNV-1a of a tensor name: its weights' seed. */
function seedOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h || 1;
}

/** Uniform values in [-scale, scale) from a per-tensor xorshift stream, `count` at a time. */
function* randomChunks(name: string, total: number, chunk: number, scale: number): Generator<Float32Array> {
  let state = seedOf(name);
  for (let done = 0; done < total; done += chunk) {
    const out = new Float32Array(Math.min(chunk, total - done));
    for (let i = 0; i < out.length; i++) {
      state ^= state << 13;
      state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      out[i] = (state / 2 ** 31 - 1) * scale;
    }
    yield out;
  }
}

export function modelPath(shape: BenchShape, type: WeightType, dir = join(dirname(fileURLToPath(import.meta.url)), '.models')): string {
  return join(dir, `${shape.name}-${type.toLowerCase()}.gguf`);
}

const DECODE: Record<number, (bytes: Uint8Array) => Float32Array> = { [GGML.Q8_0]: fromQ8_0, [GGML.Q4_K]: fromQ4_K, [GGML.Q6_K]: fromQ6_K };

/**
 * `dequantized`: write every quantized matrix as the F32 values its blocks
 * decode to (a reference for checking quantized kernels and layouts).
 */
/** `extraMeta` is appended to the file's metadata (bench/embed adds `qwen3.pooling_type`). */
export async function makeModel(shape: BenchShape, type: WeightType, file: string, dequantized = false, extraMeta: GgufSpec['metadata'] = []): Promise<void> {
  const s = shape;
  const vocab = buildVocabulary(s.vocab, s.merges);
  const q = s.heads * s.headDim;
  const kv = s.kvHeads * s.headDim;
  // [name, GGUF dims (ne0 first), kind]; 'norm' vectors hold 1 (a qwen35 file stores its (1 + w) norms so: w = 0),
  // 'a' qwen35's A = -exp(A_log) (negative), 'conv' the F32 depthwise conv.
  const layout: Array<[string, number[], 'matrix' | 'norm' | 'a' | 'conv' | 'router']> = [['token_embd.weight', [s.hidden, s.vocab], 'matrix']];
  for (let l = 0; l < s.layers; l++) {
    const p = `blk.${l}.`;
    if (isHybrid(s)) {
      const lin = s.linValueHeads * s.linDim, conv = 2 * s.linKeyHeads * s.linDim + lin;
      layout.push([`${p}attn_norm.weight`, [s.hidden], 'norm']);
      if ((l + 1) % 4 === 0)
        layout.push(
          [`${p}attn_q.weight`, [s.hidden, 2 * q], 'matrix'],
          [`${p}attn_k.weight`, [s.hidden, kv], 'matrix'],
          [`${p}attn_v.weight`, [s.hidden, kv], 'matrix'],
          [`${p}attn_output.weight`, [q, s.hidden], 'matrix'],
          [`${p}attn_q_norm.weight`, [s.headDim], 'norm'],
          [`${p}attn_k_norm.weight`, [s.headDim], 'norm'],
        );
      else
        layout.push(
          [`${p}attn_qkv.weight`, [s.hidden, conv], 'matrix'],
          [`${p}attn_gate.weight`, [s.hidden, lin], 'matrix'],
          ...((isNext(s)
            ? [[`${p}ssm_ba.weight`, [s.hidden, 2 * s.linValueHeads], 'matrix']]
            : [[`${p}ssm_beta.weight`, [s.hidden, s.linValueHeads], 'matrix'], [`${p}ssm_alpha.weight`, [s.hidden, s.linValueHeads], 'matrix']]) as typeof layout),
          [`${p}ssm_conv1d.weight`, [s.conv, conv], 'conv'],
          [`${p}ssm_dt.bias`, [s.linValueHeads], 'norm'],
          [`${p}ssm_a`, [s.linValueHeads], 'a'],
          [`${p}ssm_norm.weight`, [s.linDim], 'norm'],
          [`${p}ssm_out.weight`, [lin, s.hidden], 'matrix'],
        );
      layout.push([`${p}post_attention_norm.weight`, [s.hidden], 'norm']);
      if (isNext(s))
        layout.push(
          [`${p}ffn_gate_inp.weight`, [s.hidden, s.experts], 'router'],
          [`${p}ffn_gate_exps.weight`, [s.hidden, s.expertFfn, s.experts], 'matrix'],
          [`${p}ffn_up_exps.weight`, [s.hidden, s.expertFfn, s.experts], 'matrix'],
          [`${p}ffn_down_exps.weight`, [s.expertFfn, s.hidden, s.experts], 'matrix'],
          [`${p}ffn_gate_inp_shexp.weight`, [s.hidden], 'router'],
          [`${p}ffn_gate_shexp.weight`, [s.hidden, s.sharedFfn], 'matrix'],
          [`${p}ffn_up_shexp.weight`, [s.hidden, s.sharedFfn], 'matrix'],
          [`${p}ffn_down_shexp.weight`, [s.sharedFfn, s.hidden], 'matrix'],
        );
      else
        layout.push(
          [`${p}ffn_gate.weight`, [s.hidden, s.ffn], 'matrix'],
          [`${p}ffn_up.weight`, [s.hidden, s.ffn], 'matrix'],
          [`${p}ffn_down.weight`, [s.ffn, s.hidden], 'matrix'],
        );
      continue;
    }
    layout.push(
      [`${p}attn_norm.weight`, [s.hidden], 'norm'],
      [`${p}attn_q.weight`, [s.hidden, q], 'matrix'],
      [`${p}attn_k.weight`, [s.hidden, kv], 'matrix'],
      [`${p}attn_v.weight`, [s.hidden, kv], 'matrix'],
      [`${p}attn_output.weight`, [q, s.hidden], 'matrix'],
      [`${p}attn_q_norm.weight`, [s.headDim], 'norm'],
      [`${p}attn_k_norm.weight`, [s.headDim], 'norm'],
      [`${p}ffn_norm.weight`, [s.hidden], 'norm'],
      [`${p}ffn_gate.weight`, [s.hidden, s.ffn], 'matrix'],
      [`${p}ffn_up.weight`, [s.hidden, s.ffn], 'matrix'],
      [`${p}ffn_down.weight`, [s.ffn, s.hidden], 'matrix'],
    );
  }
  layout.push(['output_norm.weight', [s.hidden], 'norm']);
  if (isHybrid(s) && type === 'Q4_K_M') throw new Error('the hybrid bench model is written in F16 or Q8_0');
  const types = layout.map(([name, , kind]) => (kind !== 'matrix' ? GGML.F32 : matrixType(type, name, s.layers)));
  const tensors: TensorSpec[] = layout.map(([name, dims], i) => ({ name, dims, type: dequantized && types[i] !== GGML.F16 ? GGML.F32 : types[i]! }));
  const a = isNext(s) ? 'qwen3next' : isHybrid(s) ? 'qwen35' : 'qwen3';
  const hybridMeta: GgufSpec['metadata'] = isHybrid(s)
    ? [
        [`${a}.ssm.conv_kernel`, meta.u32(s.conv)],
        [`${a}.ssm.state_size`, meta.u32(s.linDim)],
        [`${a}.ssm.group_count`, meta.u32(s.linKeyHeads)],
        [`${a}.ssm.time_step_rank`, meta.u32(s.linValueHeads)],
        [`${a}.ssm.inner_size`, meta.u32(s.linValueHeads * s.linDim)],
        [`${a}.full_attention_interval`, meta.u32(4)],
        [`${a}.rope.dimension_count`, meta.u32(s.headDim / 4)],
        ...((isNext(s)
          ? [
              [`${a}.expert_count`, meta.u32(s.experts)],
              [`${a}.expert_used_count`, meta.u32(s.expertsUsed)],
              [`${a}.expert_feed_forward_length`, meta.u32(s.expertFfn)],
              [`${a}.expert_shared_feed_forward_length`, meta.u32(s.sharedFfn)],
            ]
          : [[`${a}.rope.dimension_sections`, meta.i32s([11, 11, 10, 0])]]) as GgufSpec['metadata']),
      ]
    : [];
  const spec: GgufSpec = {
    metadata: [
      ['general.architecture', meta.str(a)],
      ['general.name', meta.str(`weft bench ${s.name} (random weights)`)],
      ['general.file_type', meta.u32(FILE_TYPE[type])],
      ['general.alignment', meta.u32(32)],
      [`${a}.context_length`, meta.u32(40960)],
      [`${a}.embedding_length`, meta.u32(s.hidden)],
      [`${a}.block_count`, meta.u32(s.layers)],
      [`${a}.feed_forward_length`, meta.u32(s.ffn)],
      [`${a}.attention.head_count`, meta.u32(s.heads)],
      [`${a}.attention.head_count_kv`, meta.u32(s.kvHeads)],
      [`${a}.attention.key_length`, meta.u32(s.headDim)],
      [`${a}.attention.value_length`, meta.u32(s.headDim)],
      [`${a}.rope.freq_base`, meta.f32(isHybrid(s) ? 10_000_000 : 1_000_000)],
      [`${a}.attention.layer_norm_rms_epsilon`, meta.f32(1e-6)],
      ...hybridMeta,
      ['tokenizer.ggml.model', meta.str('gpt2')],
      ['tokenizer.ggml.pre', meta.str('qwen2')],
      ['tokenizer.ggml.tokens', meta.strings(vocab.tokens)],
      ['tokenizer.ggml.token_type', meta.i32s(vocab.types)],
      ['tokenizer.ggml.merges', meta.strings(vocab.merges)],
      ['tokenizer.ggml.eos_token_id', meta.u32(vocab.eosId)],
      ['tokenizer.ggml.padding_token_id', meta.u32(vocab.bosId)],
      ['tokenizer.ggml.bos_token_id', meta.u32(vocab.bosId)],
      ['tokenizer.ggml.add_bos_token', meta.bool(false)],
      ['tokenizer.chat_template', meta.str(CHAT_TEMPLATE)],
      ...extraMeta,
    ],
    tensors,
  };
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  await writeGgufStreaming(partial, spec, function* (index) {
    const [name, dims, kind] = layout[index]!;
    const count = dims.reduce((x, y) => x * y, 1);
    if (kind === 'norm') {
      // The hybrid's norms vary around 1, so its greedy ids depend on every per-channel and per-head order.
      const varied = isHybrid(s) && [...randomChunks(name, count, count, 0.5)][0]!.map((x) => 1 + x);
      yield new Uint8Array((varied || new Float32Array(count).fill(1)).buffer);
      return;
    }
    if (kind === 'router') {
      // Router logits of a few units, so the experts chosen differ from token to token.
      for (const values of randomChunks(name, count, count, 2 / Math.sqrt(dims[0]!))) yield new Uint8Array(values.buffer);
      return;
    }
    if (kind === 'a') {
      // A_log = log(1..16), as Qwen3.5 initialises it.
      yield new Uint8Array(Float32Array.from({ length: count }, (_, i) => -(1 + (i % 16))).buffer);
      return;
    }
    if (kind === 'conv') {
      for (const values of randomChunks(name, count, count, Math.sqrt(3 / dims[0]!))) yield new Uint8Array(values.buffer);
      return;
    }
    // Embedding rows ~ unit scale; matrices ~ 1/sqrt(fan-in) so activations stay tame.
    // (The hybrid's embeddings are smaller, so the layers rather than the residual decide its greedy ids.)
    const scale = name === 'token_embd.weight' ? (isHybrid(s) ? 0.1 : 1) : Math.sqrt(3 / dims[0]!);
    const quantize = ENCODE[types[index]!]!;
    const decode = DECODE[types[index]!];
    const encode = dequantized && decode ? (values: Float32Array) => new Uint8Array(decode(quantize(values)).buffer) : quantize;
    for (const values of randomChunks(name, count, dims[0]! * 256, scale)) yield encode(values);
  });
  renameSync(partial, file);
}

/** The model file, written first if it is not there yet. */
export async function ensureModel(shape: BenchShape, type: WeightType): Promise<string> {
  const file = modelPath(shape, type);
  if (!existsSync(file)) {
    const started = performance.now();
    process.stderr.write(`bench: writing ${file} ...\n`);
    await makeModel(shape, type, file);
    process.stderr.write(`bench: wrote ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  return file;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, hybrid: { type: 'boolean' }, next: { type: 'boolean' }, type: { type: 'string', default: 'F16' }, out: { type: 'string' }, dequantized: { type: 'boolean' } } });
  const shape = values.next ? QUICK_NEXT : values.hybrid ? (values.quick ? QUICK_HYBRID : FULL_HYBRID) : values.quick ? QUICK : FULL;
  const type = values.type as WeightType;
  if (!(type in FILE_TYPE)) throw new Error(`--type must be one of ${Object.keys(FILE_TYPE).join(', ')}`);
  const file = values.out ?? modelPath(shape, type).replace(/\.gguf$/, values.dequantized ? '-dequantized.gguf' : '.gguf');
  await makeModel(shape, type, file, values.dequantized);
  console.log(file);
}
