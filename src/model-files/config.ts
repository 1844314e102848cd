/**
 * config.json of a Hugging Face model folder, read into a typed ModelConfig.
 *
 * Both spellings are accepted: transformers 4 (`rope_theta`, `rope_scaling`,
 * `torch_dtype`) and transformers 5 (`rope_parameters`, `dtype`). Qwen3.5's
 * published layout (Qwen3_5ForConditionalGeneration) nests the text model's
 * fields in `text_config`; they are read from there (tools/hybrid/NOTES.md).
 */
import { join } from 'node:path';
import { ModelLoadError, UnsupportedModelError } from '../errors.js';
import { type LinearAttentionConfig, type MixtureOfExpertsConfig, readLinearAttention, readMixtureOfExperts } from './hybrid-config.js';
import { type EncoderArchitecture, type EncoderConfig, type EncoderShape, encoderWeightPrefix, isEncoderConfig, readEncoderConfig } from './encoder-config.js';
import { MAX_FILE_BYTES, parseJsonText, readModelFile } from './model-file.js';

export type { LinearAttentionConfig, MixtureOfExpertsConfig } from './hybrid-config.js';
export type { EncoderConfig } from './encoder-config.js';

export const SUPPORTED_ARCHITECTURES = [
  'LlamaForCausalLM',
  'MistralForCausalLM',
  'Qwen2ForCausalLM',
  'Qwen3ForCausalLM',
  'Qwen3_5ForCausalLM',
  'Qwen3_5ForConditionalGeneration',
  'Qwen3NextForCausalLM',
] as const;
/** The decoders weft generates with, and the encoders it embeds with (encoder-config.ts). */
export type Architecture = (typeof SUPPORTED_ARCHITECTURES)[number] | EncoderArchitecture;

/** RoPE frequency scaling; `null` in ModelConfig means plain RoPE. */
export type RopeScaling =
  | { readonly type: 'linear'; readonly factor: number }
  | {
      readonly type: 'llama3';
      readonly factor: number;
      readonly lowFreqFactor: number;
      readonly highFreqFactor: number;
      readonly originalMaxPositionEmbeddings: number;
    };

export interface ModelConfig {
  readonly architecture: Architecture;
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  /** Per-head width; may differ from hiddenSize / numHeads (e.g. Qwen3). */
  readonly headDim: number;
  readonly intermediateSize: number;
  readonly vocabSize: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly ropeScaling: RopeScaling | null;
  readonly tieWordEmbeddings: boolean;
  readonly maxPositionEmbeddings: number;
  /** config.json's attention_bias (Llama, Mistral, Qwen3: bias on q/k/v/o projections). */
  readonly attentionBias: boolean;
  /** q/k/v projections have a bias (Qwen2 always; others when attentionBias). */
  readonly qkvBias: boolean;
  /** o projection has a bias (attentionBias on Llama/Mistral/Qwen3; never on Qwen2). */
  readonly oBias: boolean;
  /** RMSNorm over each head of q and k before RoPE (Qwen3). */
  readonly qkNorm: boolean;
  /** Mistral's sliding-window attention span, or null for full attention. */
  readonly slidingWindow: number | null;
  /** The dtype the checkpoint was saved in, if config.json says (informative only). */
  readonly dtype: string | null;
  /** Leading dims of each head that RoPE rotates (headDim x partial_rotary_factor); headDim when absent. */
  readonly rotaryDim?: number;
  /** A hybrid model's linear-attention layers (Qwen3.5, Qwen3-Next); absent for the others. */
  readonly linearAttention?: LinearAttentionConfig;
  /** Mixture-of-experts feed-forward layers (Qwen3-Next); absent: every MLP is dense. */
  readonly mixtureOfExperts?: MixtureOfExpertsConfig;
  /**
   * What precedes "layers.N..." and "embed_tokens" in the safetensors' tensor
   * names: "model." (the default), "model.language_model." for Qwen3.5's
   * published layout (whose vision tower, model.visual.*, and multi-token
   * prediction weights, mtp.*, are not loaded: image input is not supported).
   */
  readonly weightPrefix?: string;
  /**
   * The folder holds the transformer without its LM head, as embedding models
   * are saved (`Qwen3Model`, ...; tensors without the "model." prefix): it
   * embeds, it does not generate. The backend runs it as a tied model (the
   * head it would compute is never asked for).
   */
  readonly baseModel?: boolean;
  /**
   * Made for embedding (a base model, or a GGUF file with `{arch}.pooling_type`):
   * its cache defaults to f32, since a text's cache lives only while it is read
   * and its vectors are compared to 1e-4.
   */
  readonly embeddingModel?: boolean;
  /**
   * A BERT-family encoder (encoder-config.ts): bidirectional attention, so
   * every text is computed whole in one step; it embeds, it does not generate
   * (baseModel is set too). Absent for decoders.
   */
  readonly encoder?: EncoderConfig;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads and parses `<dir>/config.json`. */
export async function loadModelConfig(dir: string): Promise<ModelConfig> {
  const file = join(dir, 'config.json');
  const bytes = await readModelFile(dir, 'config.json', MAX_FILE_BYTES.smallJson);
  if (bytes === undefined) throw new ModelLoadError(`${file} does not exist`, file);
  const json = parseJsonText(bytes.toString('utf8'), file);
  return parseModelConfig(json, file);
}

/** Turns a parsed config.json into a ModelConfig. `file` names it in errors. */
export function parseModelConfig(root: unknown, file = 'config.json'): ModelConfig {
  if (!isObject(root)) throw new ModelLoadError(`${file} must hold a JSON object`, file);
  const fail = (message: string): never => {
    throw new ModelLoadError(`${file}: ${message}`, file);
  };
  if (isEncoderConfig(root)) return encoderModelConfig(root, file);
  const architecture = readArchitecture(root, file);
  const baseModel = Array.isArray(root.architectures) && BASE_MODELS[root.architectures[0] as string] !== undefined;
  // The fields read below: the text model's.
  const json = architecture === 'Qwen3_5ForConditionalGeneration' ? nestedTextConfig(root, file) : root;

  const positiveInt = (key: string, fallback?: number): number => {
    const v = json[key] ?? fallback;
    if (v === undefined) return fail(`missing "${key}"`);
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) return fail(`"${key}" must be a positive integer`);
    return v;
  };
  const positiveNumber = (source: Json, key: string, fallback?: number): number => {
    const v = source[key] ?? fallback;
    if (v === undefined) return fail(`missing "${key}"`);
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return fail(`"${key}" must be a positive number`);
    return v;
  };
  const bool = (key: string, fallback: boolean): boolean => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'boolean') return fail(`"${key}" must be a boolean`);
    return v;
  };

  const hiddenAct = json.hidden_act ?? 'silu';
  if (hiddenAct !== 'silu') throw new UnsupportedModelError(`${file}: activation "${String(hiddenAct)}" is not supported (only silu)`);
  if (json.mlp_bias === true) throw new UnsupportedModelError(`${file}: mlp_bias is not supported`);

  const hiddenSize = positiveInt('hidden_size');
  const numHeads = positiveInt('num_attention_heads');
  const numKvHeads = positiveInt('num_key_value_heads', numHeads);
  if (numHeads % numKvHeads !== 0) fail(`num_attention_heads (${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`);
  const defaultHeadDim = hiddenSize / numHeads;
  const headDim = positiveInt('head_dim', Number.isInteger(defaultHeadDim) ? defaultHeadDim : undefined);
  if (headDim % 2 !== 0) fail(`head_dim (${headDim}) must be even`);

  const { theta, scaling, partialRotaryFactor } = readRope(json, file);
  const rotaryDim = Math.floor(headDim * partialRotaryFactor);
  if (rotaryDim < 2 || rotaryDim % 2 !== 0) fail(`partial_rotary_factor ${partialRotaryFactor} of head_dim ${headDim} must rotate an even number of dims (got ${rotaryDim})`);
  const attentionBias = bool('attention_bias', false);

  let slidingWindow: number | null = null;
  if (architecture === 'MistralForCausalLM') {
    if (json.sliding_window !== undefined && json.sliding_window !== null) slidingWindow = positiveInt('sliding_window');
  } else if (json.use_sliding_window === true) {
    throw new UnsupportedModelError(`${file}: use_sliding_window is not supported for ${architecture}`);
  }

  const numLayers = positiveInt('num_hidden_layers');
  const next = architecture === 'Qwen3NextForCausalLM';
  const hybrid = next || architecture === 'Qwen3_5ForCausalLM' || architecture === 'Qwen3_5ForConditionalGeneration';
  const mixtureOfExperts = next ? readMixtureOfExperts(json, numLayers, file) : undefined;
  const dtype = root.dtype ?? json.dtype ?? json.torch_dtype ?? null;
  return {
    architecture,
    hiddenSize,
    numLayers,
    numHeads,
    numKvHeads,
    headDim,
    intermediateSize: positiveInt('intermediate_size'),
    vocabSize: positiveInt('vocab_size'),
    rmsNormEps: positiveNumber(json, 'rms_norm_eps', 1e-6),
    ropeTheta: theta,
    ropeScaling: scaling,
    // The published Qwen3.5 layout says it at the top level (its lm_head is outside the text model).
    tieWordEmbeddings: baseModel || (typeof root.tie_word_embeddings === 'boolean' ? root.tie_word_embeddings : bool('tie_word_embeddings', false)),
    maxPositionEmbeddings: positiveInt('max_position_embeddings'),
    attentionBias,
    qkvBias: architecture === 'Qwen2ForCausalLM' || attentionBias,
    oBias: architecture !== 'Qwen2ForCausalLM' && attentionBias,
    qkNorm: architecture === 'Qwen3ForCausalLM' || hybrid,
    slidingWindow,
    dtype: typeof dtype === 'string' ? dtype : null,
    ...(rotaryDim !== headDim && { rotaryDim }),
    ...(hybrid && { linearAttention: readLinearAttention(json, numLayers, file, next) }),
    ...(mixtureOfExperts && { mixtureOfExperts }),
    ...(architecture === 'Qwen3_5ForConditionalGeneration' && { weightPrefix: 'model.language_model.' }),
    ...(baseModel && { baseModel, embeddingModel: true, weightPrefix: '' }),
  };
}

/** An encoder's ModelConfig: what its config.json says, and the decoder-only fields at values that change nothing. */
function encoderModelConfig(json: Json, file: string): ModelConfig {
  return encoderShapeConfig(readEncoderConfig(json, file), encoderWeightPrefix(json));
}

/** An encoder's shape (from config.json or GGUF metadata) as a ModelConfig; `weightPrefix` as in its folder. */
export function encoderShapeConfig(shape: EncoderShape, weightPrefix: string): ModelConfig {
  return {
    ...shape,
    numKvHeads: shape.numHeads,
    rmsNormEps: shape.encoder.layerNormEps,
    ropeScaling: null,
    tieWordEmbeddings: true,
    qkvBias: shape.attentionBias,
    oBias: shape.attentionBias,
    qkNorm: false,
    slidingWindow: null,
    baseModel: true,
    embeddingModel: true,
    weightPrefix,
  };
}

/** Qwen3_5ForConditionalGeneration's `text_config`: the text model, which is what weft runs. */
function nestedTextConfig(root: Json, file: string): Json {
  if (!isObject(root.text_config)) throw new ModelLoadError(`${file}: "text_config" must be an object (the text model's fields)`, file);
  return root.text_config;
}

const MODEL_TYPES: Record<string, Architecture> = {
  llama: 'LlamaForCausalLM',
  mistral: 'MistralForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
  qwen3_5_text: 'Qwen3_5ForCausalLM',
  qwen3_5: 'Qwen3_5ForConditionalGeneration',
  qwen3_next: 'Qwen3NextForCausalLM',
};

/** Folders of the transformer alone (no LM head), as embedding models are saved: run as their causal LM. */
const BASE_MODELS: Record<string, Architecture> = {
  LlamaModel: 'LlamaForCausalLM',
  MistralModel: 'MistralForCausalLM',
  Qwen2Model: 'Qwen2ForCausalLM',
  Qwen3Model: 'Qwen3ForCausalLM',
};

function readArchitecture(json: Json, file: string): Architecture {
  const listed = json.architectures;
  if (Array.isArray(listed) && listed.length > 0) {
    const name = listed[0];
    if (typeof name !== 'string') throw new ModelLoadError(`${file}: "architectures" must list strings`, file);
    if ((SUPPORTED_ARCHITECTURES as readonly string[]).includes(name)) return name as Architecture;
    if (BASE_MODELS[name] !== undefined) return BASE_MODELS[name];
    throw new UnsupportedModelError(
      `${file}: architecture ${name} is not supported (supported: ${SUPPORTED_ARCHITECTURES.join(', ')})`,
    );
  }
  const byType = typeof json.model_type === 'string' ? MODEL_TYPES[json.model_type] : undefined;
  if (byType) return byType;
  if (json.model_type !== undefined) throw new UnsupportedModelError(`${file}: model_type ${String(json.model_type)} is not supported`);
  throw new ModelLoadError(`${file}: missing "architectures"`, file);
}

/**
 * RoPE base and scaling. transformers 5 puts both in `rope_parameters`;
 * transformers 4 has `rope_theta` plus an optional `rope_scaling` object.
 */
function readRope(json: Json, file: string): { theta: number; scaling: RopeScaling | null; partialRotaryFactor: number } {
  const fail = (message: string): never => {
    throw new ModelLoadError(`${file}: ${message}`, file);
  };
  let params: Json;
  if (json.rope_parameters !== undefined && json.rope_parameters !== null) {
    if (!isObject(json.rope_parameters)) return fail('"rope_parameters" must be an object');
    params = json.rope_parameters;
    if (params.rope_theta === undefined && json.rope_theta === undefined) {
      // A per-attention-type map ({"full_attention": {...}}) belongs to other architectures.
      throw new UnsupportedModelError(`${file}: rope_parameters without rope_theta is not supported`);
    }
    params = { rope_theta: json.rope_theta, ...params };
  } else {
    if (json.rope_scaling !== undefined && json.rope_scaling !== null && !isObject(json.rope_scaling))
      return fail('"rope_scaling" must be an object or null');
    params = { rope_theta: json.rope_theta ?? 10000, ...(isObject(json.rope_scaling) ? json.rope_scaling : {}) };
  }
  const theta = params.rope_theta;
  if (typeof theta !== 'number' || !Number.isFinite(theta) || theta <= 0) return fail('"rope_theta" must be a positive number');
  // transformers 5 writes it in rope_parameters and at the top level; rope_parameters' wins.
  const partial = params.partial_rotary_factor ?? json.partial_rotary_factor ?? 1;
  if (typeof partial !== 'number' || !(partial > 0 && partial <= 1)) return fail('"partial_rotary_factor" must be a number in (0, 1]');

  const type = params.rope_type ?? params.type ?? 'default';
  const num = (key: string): number => {
    const v = params[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return fail(`rope scaling needs a positive "${key}"`);
    return v;
  };
  const rope = (scaling: RopeScaling | null) => ({ theta, scaling, partialRotaryFactor: partial });
  switch (type) {
    case 'default':
      return rope(null);
    case 'linear':
      return rope({ type: 'linear', factor: num('factor') });
    case 'llama3': {
      const scaling: RopeScaling = {
        type: 'llama3',
        factor: num('factor'),
        lowFreqFactor: num('low_freq_factor'),
        highFreqFactor: num('high_freq_factor'),
        originalMaxPositionEmbeddings: num('original_max_position_embeddings'),
      };
      if (scaling.highFreqFactor <= scaling.lowFreqFactor) fail('rope scaling needs high_freq_factor > low_freq_factor');
      return rope(scaling);
    }
    default:
      throw new UnsupportedModelError(`${file}: rope scaling type "${String(type)}" is not supported (default, linear, llama3)`);
  }
}
