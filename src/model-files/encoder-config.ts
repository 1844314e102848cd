/**
 * config.json of a BERT-family encoder folder (`BertModel`: all-MiniLM,
 * bge, e5, gte), read into a ModelConfig with its `encoder` fields, and the
 * Hugging Face names of its tensors.
 *
 * What differs from a decoder: learned absolute position and token-type
 * embeddings, post-norm LayerNorm with bias, biases on every projection, a
 * GELU MLP without gate, bidirectional attention and no LM head. Configs
 * that ask for anything else (relative positions, a decoder, another
 * activation, NomicBert's rotary / SwiGLU layout, XLM-RoBERTa's offset
 * positions) are refused by name.
 */
import { ModelLoadError, UnsupportedModelError } from '../errors.js';

export const ENCODER_ARCHITECTURES = ['BertModel'] as const;
export type EncoderArchitecture = (typeof ENCODER_ARCHITECTURES)[number];

/** transformers' names of the two GELU forms the native encoder computes (encoder.cc). */
const ACTIVATIONS: Readonly<Record<string, EncoderConfig['activation']>> = {
  gelu: 'gelu',
  gelu_new: 'gelu_tanh',
  gelu_pytorch_tanh: 'gelu_tanh',
};

/** Encoder architectures weft recognises but does not run yet, and what they need. */
const NOT_YET: Readonly<Record<string, string>> = {
  NomicBertModel: 'NomicBert (nomic-embed) needs rotary positions, a SwiGLU MLP and a fused Wqkv, which the CPU encoder does not have yet',
  XLMRobertaModel: 'XLM-RoBERTa (bge-m3, multilingual e5) offsets its positions by padding_idx + 1 and uses a Unigram tokenizer; not supported yet',
  RobertaModel: 'RoBERTa offsets its positions by padding_idx + 1; not supported yet',
  BertForSequenceClassification: 'a cross-encoder folder is for reranking, not embedding',
};

export interface EncoderConfig {
  /** Rows of the token-type (segment) table; token types of one text are all 0. */
  readonly typeVocabSize: number;
  readonly layerNormEps: number;
  /** 'gelu': exact erf (transformers' "gelu"); 'gelu_tanh': "gelu_new" / "gelu_pytorch_tanh". */
  readonly activation: 'gelu' | 'gelu_tanh';
}

type Json = Record<string, unknown>;

/** Whether config.json describes an encoder (by its first architecture, else model_type "bert"). */
export function isEncoderConfig(json: Json): boolean {
  const listed = Array.isArray(json.architectures) ? json.architectures[0] : undefined;
  if (typeof listed === 'string') return (ENCODER_ARCHITECTURES as readonly string[]).includes(listed) || NOT_YET[listed] !== undefined;
  return json.model_type === 'bert' || json.model_type === 'nomic_bert';
}

/** What an encoder's config.json sets of a ModelConfig (config.ts adds the decoder-only fields, inert). */
export interface EncoderShape {
  readonly architecture: EncoderArchitecture;
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly headDim: number;
  readonly intermediateSize: number;
  readonly vocabSize: number;
  readonly maxPositionEmbeddings: number;
  readonly dtype: string | null;
  readonly encoder: EncoderConfig;
}

/** Reads a BertModel config.json; refuses what the native encoder does not compute, by name. */
export function readEncoderConfig(json: Json, file: string): EncoderShape {
  const fail = (message: string): never => {
    throw new ModelLoadError(`${file}: ${message}`, file);
  };
  const name = Array.isArray(json.architectures) && typeof json.architectures[0] === 'string' ? json.architectures[0] : 'BertModel';
  const notYet = NOT_YET[name] ?? (json.model_type === 'nomic_bert' ? NOT_YET.NomicBertModel : undefined);
  if (notYet !== undefined) throw new UnsupportedModelError(`${file}: ${name}: ${notYet}`);
  const positiveInt = (key: string, fallback?: number): number => {
    const v = json[key] ?? fallback;
    if (v === undefined) return fail(`missing "${key}"`);
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) return fail(`"${key}" must be a positive integer`);
    return v;
  };
  const refuse = (what: string): never => {
    throw new UnsupportedModelError(`${file}: ${what} is not supported for ${name} (a bidirectional encoder with absolute positions)`);
  };
  const act = json.hidden_act ?? 'gelu';
  const activation = typeof act === 'string' ? ACTIVATIONS[act] : undefined;
  if (activation === undefined)
    throw new UnsupportedModelError(`${file}: activation ${JSON.stringify(act)} is not supported for ${name} (gelu, gelu_new, gelu_pytorch_tanh)`);
  const positions = json.position_embedding_type ?? 'absolute';
  if (positions !== 'absolute') refuse(`position_embedding_type ${JSON.stringify(positions)}`);
  if (json.is_decoder === true) refuse('is_decoder');
  if (json.add_cross_attention === true) refuse('add_cross_attention');

  const hiddenSize = positiveInt('hidden_size');
  const numHeads = positiveInt('num_attention_heads');
  if (hiddenSize % numHeads !== 0) fail(`hidden_size (${hiddenSize}) must be a multiple of num_attention_heads (${numHeads})`);
  const headDim = hiddenSize / numHeads;
  if (headDim % 2 !== 0) fail(`hidden_size / num_attention_heads (${headDim}) must be even`);
  const eps = json.layer_norm_eps ?? 1e-12;
  if (typeof eps !== 'number' || !(eps > 0) || !Number.isFinite(eps)) fail('"layer_norm_eps" must be a positive number');
  const dtype = json.dtype ?? json.torch_dtype ?? null;
  return {
    architecture: 'BertModel',
    hiddenSize,
    numLayers: positiveInt('num_hidden_layers'),
    numHeads,
    headDim,
    intermediateSize: positiveInt('intermediate_size'),
    vocabSize: positiveInt('vocab_size'),
    maxPositionEmbeddings: positiveInt('max_position_embeddings'),
    dtype: typeof dtype === 'string' ? dtype : null,
    encoder: { typeVocabSize: positiveInt('type_vocab_size', 2), layerNormEps: eps as number, activation },
  };
}

/** Native slot names (native/src/cpu/model/weights.cc) of an encoder -> BertModel's tensor names, by layer or not. */
const MODEL_TENSORS: Readonly<Record<string, string>> = {
  embed_tokens: 'embeddings.word_embeddings.weight',
  position_embeddings: 'embeddings.position_embeddings.weight',
  token_type_embeddings: 'embeddings.token_type_embeddings.weight',
  embeddings_layernorm: 'embeddings.LayerNorm.weight',
  'embeddings_layernorm.bias': 'embeddings.LayerNorm.bias',
};
const LAYER_TENSORS: Readonly<Record<string, string>> = {
  q_proj: 'attention.self.query.weight',
  'q_proj.bias': 'attention.self.query.bias',
  k_proj: 'attention.self.key.weight',
  'k_proj.bias': 'attention.self.key.bias',
  v_proj: 'attention.self.value.weight',
  'v_proj.bias': 'attention.self.value.bias',
  o_proj: 'attention.output.dense.weight',
  'o_proj.bias': 'attention.output.dense.bias',
  attention_layernorm: 'attention.output.LayerNorm.weight',
  'attention_layernorm.bias': 'attention.output.LayerNorm.bias',
  up_proj: 'intermediate.dense.weight',
  'up_proj.bias': 'intermediate.dense.bias',
  down_proj: 'output.dense.weight',
  'down_proj.bias': 'output.dense.bias',
  output_layernorm: 'output.LayerNorm.weight',
  'output_layernorm.bias': 'output.LayerNorm.bias',
};

/**
 * The BertModel tensor name of a native slot: "q_proj" in layer 3 is
 * encoder.layer.3.attention.self.query.weight. `prefix`: "" for a bare
 * BertModel folder, "bert." where the encoder sits in a task model.
 */
export function bertTensorName(kind: string, layer: number, prefix = ''): string {
  const name = layer < 0 ? MODEL_TENSORS[kind] : LAYER_TENSORS[kind];
  if (name === undefined) throw new ModelLoadError(`the encoder has no tensor for slot ${kind}`, '', kind);
  return layer < 0 ? `${prefix}${name}` : `${prefix}encoder.layer.${layer}.${name}`;
}
