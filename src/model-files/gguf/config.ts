/**
 * GGUF metadata (`{arch}.*` keys, llama.cpp's names) read into the same
 * ModelConfig that config.json gives, so the rest of weft cannot tell where
 * a model came from.
 */
import { ModelLoadError, UnsupportedModelError } from '../../errors.js';
import type { Architecture, ModelConfig, RopeScaling } from '../config.js';
import { GgufMetadata } from './metadata.js';
import type { GgufFile } from './reader.js';

/** GGUF `general.architecture` -> the Hugging Face architecture weft runs. */
export const GGUF_ARCHITECTURES: Readonly<Record<string, Architecture>> = {
  llama: 'LlamaForCausalLM',
  mistral: 'MistralForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
};

/**
 * llama.cpp's llama architecture rotates adjacent pairs (x[2i], x[2i+1]); its
 * converter permutes HF's q/k rows into that order. qwen2/qwen3 rotate halves
 * (x[i], x[i + d/2]) like HF and are stored unpermuted.
 */
export function ggufRopeIsInterleaved(arch: string): boolean {
  return arch === 'llama' || arch === 'mistral';
}

export function ggufArchitecture(gguf: GgufFile): string {
  const meta = new GgufMetadata(gguf);
  const arch = meta.string('general.architecture');
  if (arch === undefined) return meta.fail('missing general.architecture');
  if (!(arch in GGUF_ARCHITECTURES))
    throw new UnsupportedModelError(`${gguf.file}: GGUF architecture "${arch}" is not supported (${Object.keys(GGUF_ARCHITECTURES).join(', ')})`);
  return arch;
}

export function ggufModelConfig(gguf: GgufFile): ModelConfig {
  const meta = new GgufMetadata(gguf);
  const arch = ggufArchitecture(gguf);
  const architecture = GGUF_ARCHITECTURES[arch]!;
  const k = (name: string) => `${arch}.${name}`;
  const unsupported = (what: string): never => {
    throw new UnsupportedModelError(`${gguf.file}: ${what} is not supported`);
  };

  if ((meta.number(k('expert_count')) ?? 0) > 0) unsupported('a mixture of experts');
  const embedding = gguf.tensors.get('token_embd.weight');
  if (!embedding) throw new ModelLoadError(`${gguf.file}: tensor token_embd.weight is missing`, gguf.file, 'token_embd.weight');
  if (embedding.dims.length !== 2) meta.fail(`token_embd.weight must be 2-D, dims ${JSON.stringify(embedding.dims)}`);

  const hiddenSize = meta.positiveInt(k('embedding_length'));
  const numHeads = meta.positiveInt(k('attention.head_count'));
  const numKvHeads = meta.positiveInt(k('attention.head_count_kv'), numHeads);
  if (numHeads % numKvHeads !== 0) meta.fail(`${k('attention.head_count')} (${numHeads}) must be a multiple of head_count_kv (${numKvHeads})`);
  const defaultHeadDim = hiddenSize / numHeads;
  const headDim = meta.positiveInt(k('attention.key_length'), Number.isInteger(defaultHeadDim) ? defaultHeadDim : undefined);
  if (headDim % 2 !== 0) meta.fail(`head dimension ${headDim} must be even`);
  const valueLength = meta.number(k('attention.value_length'));
  if (valueLength !== undefined && valueLength !== headDim) unsupported(`value_length ${valueLength} != key_length ${headDim}`);
  const ropeDims = meta.number(k('rope.dimension_count'));
  if (ropeDims !== undefined && ropeDims !== headDim) unsupported(`partial RoPE (rope.dimension_count ${ropeDims} of ${headDim})`);

  const vocabSize = embedding.dims[1]!;
  if (embedding.dims[0] !== hiddenSize) meta.fail(`token_embd.weight has rows of ${embedding.dims[0]}, embedding_length is ${hiddenSize}`);
  const declaredVocab = meta.number(k('vocab_size'));
  if (declaredVocab !== undefined && declaredVocab !== vocabSize) meta.fail(`${k('vocab_size')} ${declaredVocab} != token_embd.weight's ${vocabSize} rows`);

  const attentionBias = gguf.tensors.has('blk.0.attn_output.bias');
  const qkvBias = gguf.tensors.has('blk.0.attn_q.bias');
  if (architecture === 'Qwen2ForCausalLM' && !qkvBias) meta.fail('a qwen2 model needs q/k/v biases (blk.0.attn_q.bias is missing)');

  let slidingWindow: number | null = null;
  if (architecture === 'MistralForCausalLM' && meta.has(k('attention.sliding_window'))) slidingWindow = meta.positiveInt(k('attention.sliding_window'));

  return {
    architecture,
    hiddenSize,
    numLayers: meta.positiveInt(k('block_count')),
    numHeads,
    numKvHeads,
    headDim,
    intermediateSize: meta.positiveInt(k('feed_forward_length')),
    vocabSize,
    rmsNormEps: meta.positiveNumber(k('attention.layer_norm_rms_epsilon'), 1e-6),
    ropeTheta: meta.positiveNumber(k('rope.freq_base'), 10000),
    ropeScaling: ropeScaling(meta, arch),
    tieWordEmbeddings: !gguf.tensors.has('output.weight'),
    maxPositionEmbeddings: meta.positiveInt(k('context_length')),
    attentionBias,
    qkvBias: qkvBias || attentionBias,
    oBias: attentionBias && architecture !== 'Qwen2ForCausalLM',
    qkNorm: architecture === 'Qwen3ForCausalLM',
    slidingWindow,
    dtype: fileTypeName(meta.number('general.file_type')),
  };
}

function ropeScaling(meta: GgufMetadata, arch: string): RopeScaling | null {
  const type = meta.string(`${arch}.rope.scaling.type`);
  // Older files carry only rope.scale_linear.
  const legacyLinear = meta.number(`${arch}.rope.scale_linear`);
  if (type === undefined || type === 'none') {
    if (legacyLinear !== undefined && legacyLinear !== 1) return { type: 'linear', factor: meta.positiveNumber(`${arch}.rope.scale_linear`) };
    return null;
  }
  if (type === 'linear') {
    const factor = meta.positiveNumber(`${arch}.rope.scaling.factor`);
    return factor === 1 ? null : { type: 'linear', factor };
  }
  throw new UnsupportedModelError(`${meta.gguf.file}: RoPE scaling "${type}" is not supported (none, linear; llama3 via rope_freqs)`);
}

/** llama.cpp's `enum llama_ftype` names of the common file types (informative only). */
const FILE_TYPES: Record<number, string> = { 0: 'F32', 1: 'F16', 2: 'Q4_0', 7: 'Q8_0', 14: 'Q4_K_S', 15: 'Q4_K_M', 18: 'Q6_K', 32: 'BF16' };

function fileTypeName(id: number | undefined): string | null {
  return id === undefined ? null : (FILE_TYPES[id] ?? `ftype ${id}`);
}
