/**
 * GGUF metadata (`{arch}.*` keys, llama.cpp's names) read into the same
 * ModelConfig that config.json gives, so the rest of weft cannot tell where
 * a model came from.
 */
import { ModelLoadError, UnsupportedModelError } from '../../errors.js';
import { encoderShapeConfig, type Architecture, type LinearAttentionConfig, type MixtureOfExpertsConfig, type ModelConfig, type RopeScaling } from '../config.js';
import { GgufMetadata } from './metadata.js';
import type { GgufFile } from './reader.js';

/** GGUF `general.architecture` -> the Hugging Face architecture weft runs. */
export const GGUF_ARCHITECTURES: Readonly<Record<string, Architecture>> = {
  llama: 'LlamaForCausalLM',
  mistral: 'MistralForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
  // llama.cpp's converter writes both Qwen3.5 layouts (text-only and the published one) as qwen35.
  qwen35: 'Qwen3_5ForCausalLM',
  qwen3next: 'Qwen3NextForCausalLM',
  // Encoders (embeddings): llama.cpp's converter writes BertModel and its task models as bert,
  // NomicBertModel (nomic-embed-text v1 / v1.5) as nomic-bert.
  bert: 'BertModel',
  'nomic-bert': 'NomicBertModel',
};

/** GGUF architectures weft knows of but does not read yet, with what is missing. */
const GGUF_NOT_YET: Readonly<Record<string, string>> = {
  qwen35moe: 'the mixture-of-experts variant of Qwen3.5 is not supported; the dense one (qwen35) is',
  'nomic-bert-moe': 'the mixture-of-experts NomicBert (nomic-embed-text-v2-moe) is not supported; nomic-bert (v1, v1.5) is',
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
  if (GGUF_NOT_YET[arch]) throw new UnsupportedModelError(`${gguf.file}: GGUF architecture "${arch}" is not supported yet: ${GGUF_NOT_YET[arch]}`);
  if (!(arch in GGUF_ARCHITECTURES))
    throw new UnsupportedModelError(`${gguf.file}: GGUF architecture "${arch}" is not supported (${Object.keys(GGUF_ARCHITECTURES).join(', ')})`);
  return arch;
}

export function ggufModelConfig(gguf: GgufFile): ModelConfig {
  const meta = new GgufMetadata(gguf);
  const arch = ggufArchitecture(gguf);
  if (arch === 'bert' || arch === 'nomic-bert') return ggufEncoderConfig(meta, arch);
  const architecture = GGUF_ARCHITECTURES[arch]!;
  const k = (name: string) => `${arch}.${name}`;
  const unsupported = (what: string): never => {
    throw new UnsupportedModelError(`${gguf.file}: ${what} is not supported`);
  };

  const next = arch === 'qwen3next';
  if (!next && (meta.number(k('expert_count')) ?? 0) > 0) unsupported(`a mixture of experts in a ${arch} file`);
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
  const hybrid = arch === 'qwen35' || next;
  const ropeDims = meta.number(k('rope.dimension_count'));
  let rotaryDim: number | undefined;
  if (hybrid) {
    // Partial RoPE: the converter writes int(head_dim x partial_rotary_factor), the rotated dims.
    rotaryDim = meta.positiveInt(k('rope.dimension_count'));
    if (rotaryDim % 2 !== 0 || rotaryDim > headDim) meta.fail(`${k('rope.dimension_count')} ${rotaryDim} must be even and at most the head dimension ${headDim}`);
  } else if (ropeDims !== undefined && ropeDims !== headDim) unsupported(`partial RoPE (rope.dimension_count ${ropeDims} of ${headDim})`);
  // Multi-token-prediction blocks (Qwen3.5's MTP) trail the model's own: block_count counts them, weft does not run them.
  const blockCount = meta.positiveInt(k('block_count'));
  const nextn = hybrid ? (meta.number(k('nextn_predict_layers')) ?? 0) : 0;
  if (!Number.isSafeInteger(nextn) || nextn < 0 || nextn >= blockCount)
    meta.fail(`${k('nextn_predict_layers')} ${nextn} must be a non-negative integer below block_count ${blockCount}`);
  const numLayers = blockCount - nextn;

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
    numLayers,
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
    qkNorm: architecture === 'Qwen3ForCausalLM' || hybrid,
    slidingWindow,
    dtype: fileTypeName(meta.number('general.file_type')),
    ...(rotaryDim !== undefined && rotaryDim !== headDim && { rotaryDim }),
    ...(hybrid && { linearAttention: ggufLinearAttention(meta, arch, numLayers) }),
    ...(next && { mixtureOfExperts: ggufMixtureOfExperts(meta, arch, numLayers) }),
    ...(meta.has(k('pooling_type')) && { embeddingModel: true }),
  };
}

/**
 * A qwen35 file's Gated DeltaNet shape, from llama.cpp's ssm.* keys
 * (tools/hybrid/NOTES.md section 8): state_size = key head dim, group_count =
 * key heads, time_step_rank = value heads, inner_size = value heads x value
 * head dim. Layer i is full attention iff (i + 1) % full_attention_interval == 0
 * (4 when absent, as llama.cpp reads it), unless attention.recurrent_layers
 * lists every layer. Every missing or malformed key is a ModelLoadError naming it.
 */
function ggufLinearAttention(meta: GgufMetadata, arch: string, numLayers: number): LinearAttentionConfig {
  const k = (name: string) => `${arch}.${name}`;
  const convKernel = meta.positiveInt(k('ssm.conv_kernel'));
  if (convKernel > 16) meta.fail(`${k('ssm.conv_kernel')} ${convKernel} is larger than the 16 taps weft's CPU backend supports`);
  const keyHeadDim = meta.positiveInt(k('ssm.state_size'));
  const numKeyHeads = meta.positiveInt(k('ssm.group_count'));
  const numValueHeads = meta.positiveInt(k('ssm.time_step_rank'));
  if (numValueHeads % numKeyHeads !== 0)
    meta.fail(`${k('ssm.time_step_rank')} (${numValueHeads} value heads) must be a multiple of ${k('ssm.group_count')} (${numKeyHeads} key heads)`);
  const inner = meta.positiveInt(k('ssm.inner_size'));
  if (inner % numValueHeads !== 0) meta.fail(`${k('ssm.inner_size')} ${inner} must be a multiple of ${k('ssm.time_step_rank')} ${numValueHeads}`);
  const valueHeadDim = inner / numValueHeads;
  if (valueHeadDim > 512) meta.fail(`value head dim ${valueHeadDim} (${k('ssm.inner_size')} / ${k('ssm.time_step_rank')}) is larger than the 512 weft's CPU backend supports`);

  let layers: boolean[];
  const listed = meta.array(k('attention.recurrent_layers'));
  if (listed !== undefined) {
    if (listed.values.length < numLayers || !listed.values.every((v) => typeof v === 'boolean' || v === 0 || v === 1))
      meta.fail(`${k('attention.recurrent_layers')} must give a bool for each of the ${numLayers} layers`);
    layers = listed.values.slice(0, numLayers).map((v) => v === true || v === 1);
  } else {
    const interval = meta.positiveInt(k('full_attention_interval'), 4);
    layers = Array.from({ length: numLayers }, (_, i) => (i + 1) % interval !== 0);
  }
  return { layers, numKeyHeads, numValueHeads, keyHeadDim, valueHeadDim, convKernel };
}

/**
 * A qwen3next file's sparse MLPs, from llama.cpp's expert_* keys. A layer is a
 * mixture of experts where it has a router (ffn_gate_inp) and dense where it
 * has ffn_gate (Qwen3-Next's mlp_only_layers). The chosen experts' weights are
 * renormalised (Qwen3-Next's norm_topk_prob) unless expert_weights_norm says
 * otherwise; a router other than softmax (expert_gating_func 1) is refused.
 */
function ggufMixtureOfExperts(meta: GgufMetadata, arch: string, numLayers: number): MixtureOfExpertsConfig {
  const k = (name: string) => `${arch}.${name}`;
  const numExperts = meta.positiveInt(k('expert_count'));
  const expertsPerToken = meta.positiveInt(k('expert_used_count'));
  if (expertsPerToken > numExperts) meta.fail(`${k('expert_used_count')} (${expertsPerToken}) must not exceed ${k('expert_count')} (${numExperts})`);
  const gating = meta.number(k('expert_gating_func'));
  if (gating !== undefined && gating !== 1)
    throw new UnsupportedModelError(`${meta.gguf.file}: ${k('expert_gating_func')} ${gating} is not supported (1: softmax, as Qwen3-Next routes)`);
  const layers = Array.from({ length: numLayers }, (_, i) => {
    const routed = meta.gguf.tensors.has(`blk.${i}.ffn_gate_inp.weight`);
    if (!routed && !meta.gguf.tensors.has(`blk.${i}.ffn_gate.weight`)) meta.fail(`layer ${i} has neither a router (blk.${i}.ffn_gate_inp.weight) nor a dense MLP (blk.${i}.ffn_gate.weight)`);
    return routed;
  });
  return {
    layers,
    numExperts,
    expertsPerToken,
    expertIntermediateSize: meta.positiveInt(k('expert_feed_forward_length')),
    sharedExpertIntermediateSize: meta.has(k('expert_shared_feed_forward_length')) ? meta.positiveInt(k('expert_shared_feed_forward_length')) : 0,
    normTopKProb: meta.bool(k('expert_weights_norm')) ?? true,
  };
}

/**
 * An encoder file (an embedding model as llama.cpp's converter writes it): the
 * shape from {arch}.* (attention.layer_norm_epsilon, no causal attention), the
 * token-type count from tokenizer.ggml.token_type_count. bert is BertModel:
 * learned positions, biases, GELU (GGUF does not say which; BERT's own is the
 * exact erf one). nomic-bert is NomicBertModel: rotary positions
 * (rope.freq_base, nomic's 1000 when absent), SwiGLU, no biases.
 */
function ggufEncoderConfig(meta: GgufMetadata, arch: 'bert' | 'nomic-bert'): ModelConfig {
  const k = (name: string) => `${arch}.${name}`;
  if (meta.bool(k('attention.causal')) === true) meta.fail(`${k('attention.causal')} is true; a ${arch} file is a bidirectional encoder`);
  const embedding = meta.gguf.tensors.get('token_embd.weight');
  if (!embedding || embedding.dims.length !== 2) meta.fail('tensor token_embd.weight is missing or not 2-D');
  const hiddenSize = meta.positiveInt(k('embedding_length'));
  const numHeads = meta.positiveInt(k('attention.head_count'));
  const headDim = hiddenSize / numHeads;
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) meta.fail(`${k('embedding_length')} ${hiddenSize} must be an even multiple of ${k('attention.head_count')} ${numHeads}`);
  const nomic = arch === 'nomic-bert';
  return encoderShapeConfig(
    {
      architecture: nomic ? 'NomicBertModel' : 'BertModel',
      hiddenSize,
      numLayers: meta.positiveInt(k('block_count')),
      numHeads,
      headDim,
      intermediateSize: meta.positiveInt(k('feed_forward_length')),
      vocabSize: embedding!.dims[1]!,
      maxPositionEmbeddings: meta.positiveInt(k('context_length')),
      dtype: fileTypeName(meta.number('general.file_type')),
      ropeTheta: nomic ? meta.positiveNumber(k('rope.freq_base'), 1000) : 10000,
      attentionBias: !nomic,
      encoder: {
        typeVocabSize: meta.positiveInt('tokenizer.ggml.token_type_count', 2),
        layerNormEps: meta.positiveNumber(k('attention.layer_norm_epsilon'), 1e-12),
        activation: nomic ? 'swiglu' : 'gelu',
        positions: nomic ? 'rotary' : 'absolute',
        mlpBias: !nomic,
        positionOffset: 0, // llama.cpp's converter cuts a RoBERTa table's unused rows off
      },
    },
    '',
  );
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
