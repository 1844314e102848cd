/**
 * config.json of a BERT-family encoder folder, read into a ModelConfig with
 * its `encoder` fields, and the Hugging Face names of its tensors:
 *
 * - `BertModel` (all-MiniLM, bge, e5, gte): learned absolute position and
 *   token-type embeddings, post-norm LayerNorm with bias, biases on every
 *   projection, a GELU MLP without gate;
 * - `XLMRobertaModel` / `RobertaModel` (multilingual-e5, bge-m3's encoder):
 *   BERT's layers and tensor names, positions counted from padding_idx + 1
 *   (EncoderConfig.positionOffset), usually one token type;
 * - `NomicBertModel` (nomic-embed), in the names transformers 5 writes
 *   (hidden_size, rope_parameters, hidden_act "silu") or those of the
 *   published remote-code config (n_embd, rotary_emb_base,
 *   activation_function "swiglu"): token-type embeddings without positions,
 *   RoPE on q and k, a SwiGLU MLP, no biases but the LayerNorms', q, k and v
 *   fused in one Wqkv tensor.
 *
 * Both attend both ways and have no LM head. Configs that ask for anything
 * else (relative positions, a decoder, another activation, NomicBert's MoE or
 * interleaved rotary) are refused by name.
 */
import { ModelLoadError, UnsupportedModelError } from '../errors.js';

export const ENCODER_ARCHITECTURES = ['BertModel', 'XLMRobertaModel', 'RobertaModel', 'NomicBertModel'] as const;
export type EncoderArchitecture = (typeof ENCODER_ARCHITECTURES)[number];

/** transformers' names of the two GELU forms the native encoder computes (encoder.cc). */
const ACTIVATIONS: Readonly<Record<string, EncoderConfig['activation']>> = {
  gelu: 'gelu',
  gelu_new: 'gelu_tanh',
  gelu_pytorch_tanh: 'gelu_tanh',
};

/** Encoder architectures weft recognises but does not run yet, and what they need. */
const NOT_YET: Readonly<Record<string, string>> = {
  ModernBertModel: 'ModernBERT (alternating local and global attention, GeGLU) is not supported yet',
  NewModel: "GTE's NewModel (rotary positions, remote code) is not supported yet",
};

/** model_type -> architecture, for a config.json without "architectures". */
const MODEL_TYPES: Readonly<Record<string, EncoderArchitecture>> = {
  bert: 'BertModel',
  'xlm-roberta': 'XLMRobertaModel',
  roberta: 'RobertaModel',
  nomic_bert: 'NomicBertModel',
};

export interface EncoderConfig {
  /** Rows of the token-type (segment) table; token types of one text are all 0. */
  readonly typeVocabSize: number;
  readonly layerNormEps: number;
  /**
   * 'gelu': exact erf (transformers' "gelu"); 'gelu_tanh': "gelu_new" /
   * "gelu_pytorch_tanh"; 'swiglu': down(silu(gate) * up), NomicBert's.
   */
  readonly activation: 'gelu' | 'gelu_tanh' | 'swiglu';
  /** 'absolute': a learned position table (BERT); 'rotary': RoPE on q and k (NomicBert, ModelConfig.ropeTheta). */
  readonly positions: 'absolute' | 'rotary';
  /** Biases on the MLP's projections (BERT); the attention's are ModelConfig.qkvBias / oBias. */
  readonly mlpBias: boolean;
  /**
   * The position table's row for a text's first token: 0 for BERT, padding_idx + 1 for
   * (XLM-)RoBERTa, which numbers positions after its padding index. The rows before it are
   * never read; the weight plan starts the table there (encoderTensorNaming).
   */
  readonly positionOffset: number;
}

type Json = Record<string, unknown>;

/**
 * Encoders inside task models: cross-encoders (rerankers: ms-marco models, bge-reranker-base / -v2-m3),
 * each the encoder it wraps and the prefix its tensors sit under.
 */
const TASK_MODELS: Readonly<Record<string, { readonly encoder: EncoderArchitecture; readonly prefix: string }>> = {
  BertForSequenceClassification: { encoder: 'BertModel', prefix: 'bert.' },
  XLMRobertaForSequenceClassification: { encoder: 'XLMRobertaModel', prefix: 'roberta.' },
  RobertaForSequenceClassification: { encoder: 'RobertaModel', prefix: 'roberta.' },
};
const taskModel = (listed: unknown) => (typeof listed === 'string' ? TASK_MODELS[listed] : undefined);

/** Where an encoder's tensors sit in its folder: under the task model's prefix, else at the top. */
export function encoderWeightPrefix(json: Json): string {
  return taskModel(Array.isArray(json.architectures) ? json.architectures[0] : undefined)?.prefix ?? '';
}

/** Whether config.json describes an encoder (by its first architecture, else model_type "bert"). */
export function isEncoderConfig(json: Json): boolean {
  const listed = Array.isArray(json.architectures) ? json.architectures[0] : undefined;
  if (typeof listed === 'string')
    return (ENCODER_ARCHITECTURES as readonly string[]).includes(listed) || taskModel(listed) !== undefined || NOT_YET[listed] !== undefined;
  return typeof json.model_type === 'string' && MODEL_TYPES[json.model_type] !== undefined;
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
  readonly ropeTheta: number;
  /** Biases on q, k, v and the attention output. */
  readonly attentionBias: boolean;
  readonly encoder: EncoderConfig;
}

/** Reads a BertModel config.json; refuses what the native encoder does not compute, by name. */
export function readEncoderConfig(json: Json, file: string): EncoderShape {
  const fail = (message: string): never => {
    throw new ModelLoadError(`${file}: ${message}`, file);
  };
  const listed = Array.isArray(json.architectures) && typeof json.architectures[0] === 'string' ? json.architectures[0] : undefined;
  // A task model's encoder is the model it wraps (its head, e.g. a cross-encoder's, is read by whoever uses it).
  const name = taskModel(listed)?.encoder ?? listed ?? MODEL_TYPES[json.model_type as string] ?? 'BertModel';
  const notYet = NOT_YET[name];
  if (notYet !== undefined) throw new UnsupportedModelError(`${file}: ${name}: ${notYet}`);
  if (name === 'NomicBertModel') return readNomicBertConfig(json, file);
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
  // (XLM-)RoBERTa counts positions from padding_idx + 1: the first usable row of its table.
  const roberta = name === 'XLMRobertaModel' || name === 'RobertaModel';
  const positionOffset = roberta ? nonNegativeInt(json.pad_token_id ?? 1, 'pad_token_id', fail) + 1 : 0;
  const rows = positiveInt('max_position_embeddings');
  if (rows <= positionOffset) fail(`max_position_embeddings (${rows}) leaves no position after the ${positionOffset} rows before padding_idx + 1`);
  return {
    architecture: roberta ? name : 'BertModel',
    hiddenSize,
    numLayers: positiveInt('num_hidden_layers'),
    numHeads,
    headDim,
    intermediateSize: positiveInt('intermediate_size'),
    vocabSize: positiveInt('vocab_size'),
    maxPositionEmbeddings: rows - positionOffset,
    dtype: typeof dtype === 'string' ? dtype : null,
    ropeTheta: 10000,
    attentionBias: true,
    encoder: { typeVocabSize: positiveInt('type_vocab_size', 2), layerNormEps: eps as number, activation, positions: 'absolute', mlpBias: true, positionOffset },
  };
}

/**
 * A NomicBertModel config.json, in transformers 5's names or the published
 * remote-code ones (each field read from whichever the file has).
 */
function readNomicBertConfig(json: Json, file: string): EncoderShape {
  const name = 'NomicBertModel';
  const pick = (...keys: string[]): unknown => keys.map((k) => json[k]).find((v) => v !== undefined && v !== null);
  const positiveInt = (keys: string[], fallback?: number): number => {
    const v = pick(...keys) ?? fallback;
    if (v === undefined) throw new ModelLoadError(`${file}: missing "${keys[0]}"`, file);
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) throw new ModelLoadError(`${file}: "${keys[0]}" must be a positive integer`, file);
    return v;
  };
  const refuse = (what: string): never => {
    throw new UnsupportedModelError(`${file}: ${what} is not supported for ${name} (rotary, SwiGLU, post-norm, no biases)`);
  };
  // The remote-code config's switches; transformers 5's config has none of them (its model is this one).
  const act = pick('hidden_act', 'activation_function') ?? 'silu';
  if (act !== 'silu' && act !== 'swiglu') refuse(`activation ${JSON.stringify(act)}`);
  for (const key of ['qkv_proj_bias', 'mlp_fc1_bias', 'mlp_fc2_bias', 'prenorm', 'causal', 'rotary_emb_interleaved', 'use_rms_norm'])
    if (json[key] === true) refuse(key);
  if (json.rotary_emb_fraction !== undefined && json.rotary_emb_fraction !== 1) refuse(`rotary_emb_fraction ${String(json.rotary_emb_fraction)}`);
  if (json.rotary_scaling_factor !== undefined && json.rotary_scaling_factor !== null) refuse('rotary_scaling_factor (dynamic NTK scaling)');
  if (typeof json.moe_every_n_layers === 'number' && json.moe_every_n_layers > 0) refuse('a mixture of experts (moe_every_n_layers)');
  const rope = json.rope_parameters as Json | undefined;
  if (rope !== undefined && rope !== null && (rope.rope_type ?? 'default') !== 'default') refuse(`rope_type ${JSON.stringify(rope.rope_type)}`);
  const theta = (rope?.rope_theta as number | undefined) ?? pick('rope_theta', 'rotary_emb_base') ?? 1000;
  if (typeof theta !== 'number' || !(theta > 0)) throw new ModelLoadError(`${file}: the rotary base must be a positive number`, file);

  const hiddenSize = positiveInt(['hidden_size', 'n_embd']);
  const numHeads = positiveInt(['num_attention_heads', 'n_head']);
  const headDim = positiveInt(['head_dim'], hiddenSize / numHeads);
  if (headDim * numHeads !== hiddenSize) throw new ModelLoadError(`${file}: hidden_size (${hiddenSize}) must be num_attention_heads x head_dim`, file);
  if (headDim % 2 !== 0) throw new ModelLoadError(`${file}: the head width (${headDim}) must be even`, file);
  const eps = pick('layer_norm_eps', 'layer_norm_epsilon') ?? 1e-12;
  if (typeof eps !== 'number' || !(eps > 0)) throw new ModelLoadError(`${file}: "layer_norm_eps" must be a positive number`, file);
  const dtype = json.dtype ?? json.torch_dtype ?? null;
  return {
    architecture: name,
    hiddenSize,
    numLayers: positiveInt(['num_hidden_layers', 'n_layer']),
    numHeads,
    headDim,
    intermediateSize: positiveInt(['intermediate_size', 'n_inner']),
    vocabSize: positiveInt(['vocab_size']),
    maxPositionEmbeddings: positiveInt(['max_position_embeddings', 'n_positions']),
    dtype: typeof dtype === 'string' ? dtype : null,
    ropeTheta: theta,
    attentionBias: false,
    encoder: { typeVocabSize: positiveInt(['type_vocab_size'], 2), layerNormEps: eps, activation: 'swiglu', positions: 'rotary', mlpBias: false, positionOffset: 0 },
  };
}

function nonNegativeInt(v: unknown, key: string, fail: (message: string) => never): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(`"${key}" must be a non-negative integer`);
  return v as number;
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

/** The same for NomicBertModel, as transformers 5 saves it and nomic-embed is published: q, k, v are thirds of Wqkv's rows. */
const NOMIC_MODEL_TENSORS: Readonly<Record<string, string>> = {
  embed_tokens: 'embeddings.word_embeddings.weight',
  token_type_embeddings: 'embeddings.token_type_embeddings.weight',
  embeddings_layernorm: 'emb_ln.weight',
  'embeddings_layernorm.bias': 'emb_ln.bias',
};
const NOMIC_LAYER_TENSORS: Readonly<Record<string, string | TensorPart>> = {
  q_proj: { name: 'attn.Wqkv.weight', part: 0, parts: 3 },
  k_proj: { name: 'attn.Wqkv.weight', part: 1, parts: 3 },
  v_proj: { name: 'attn.Wqkv.weight', part: 2, parts: 3 },
  o_proj: 'attn.out_proj.weight',
  attention_layernorm: 'norm1.weight',
  'attention_layernorm.bias': 'norm1.bias',
  up_proj: 'mlp.fc11.weight',
  gate_proj: 'mlp.fc12.weight',
  down_proj: 'mlp.fc2.weight',
  output_layernorm: 'norm2.weight',
  'output_layernorm.bias': 'norm2.bias',
};

/** A slot that is one of `parts` equal row blocks of a stored tensor (a fused projection). */
export interface TensorPart {
  readonly name: string;
  readonly part: number;
  readonly parts: number;
}

/** A slot that is a stored table's rows from `firstRow` on, as many as the slot has (RoBERTa's positions). */
export interface TensorRows {
  readonly name: string;
  readonly firstRow: number;
}

/** How an encoder's slots are named in its folder: BertModel's names (RoBERTa's position table from its offset row) or NomicBert's. */
export function encoderTensorNaming(config: { readonly architecture: string; readonly encoder: EncoderConfig }): (kind: string, layer: number, prefix?: string) => string | TensorPart | TensorRows {
  if (config.architecture === 'NomicBertModel') return nomicBertTensorName;
  const offset = config.encoder.positionOffset;
  if (offset === 0) return bertTensorName;
  return (kind, layer, prefix) => {
    const name = bertTensorName(kind, layer, prefix);
    return kind === 'position_embeddings' ? { name, firstRow: offset } : name;
  };
}

export function nomicBertTensorName(kind: string, layer: number, prefix = ''): string | TensorPart {
  const entry = layer < 0 ? NOMIC_MODEL_TENSORS[kind] : NOMIC_LAYER_TENSORS[kind];
  if (entry === undefined) throw new ModelLoadError(`the encoder has no tensor for slot ${kind}`, '', kind);
  const full = (name: string) => (layer < 0 ? `${prefix}${name}` : `${prefix}encoder.layers.${layer}.${name}`);
  return typeof entry === 'string' ? full(entry) : { ...entry, name: full(entry.name) };
}
