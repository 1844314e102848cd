/**
 * How a model folder turns token states into one embedding, as
 * sentence-transformers saves it: modules.json lists the modules after the
 * transformer (a Pooling module's config in 1_Pooling/config.json, in both of
 * its forms, and a Normalize module), and config_sentence_transformers.json
 * names prompts. A folder without these files is embedded with the decoder
 * default: the last token's state, L2-normalised (docs/embeddings.md).
 */
import { join } from 'node:path';
import { InvalidOptionError, ModelLoadError, UnsupportedModelError } from '../errors.js';
import { MAX_FILE_BYTES, parseJsonText, readModelFile } from '../model-files/model-file.js';
import type { Pooling } from '../engine/embedding.js';

export interface EmbeddingConfig {
  readonly pooling: Pooling;
  /** Whether the pooled vector is divided by its L2 norm (a Normalize module). */
  readonly normalize: boolean;
  /** Named prompts put before a text (config_sentence_transformers.json's `prompts`), e.g. `query`. */
  readonly prompts: Readonly<Record<string, string>>;
  /** The prompt used when a call names none (default_prompt_name), if the folder sets one. */
  readonly defaultPromptName?: string;
  /**
   * The most tokens sentence-transformers reads of one text (the Transformer module's
   * `max_seq_length`, else the tokenizer's `model_max_length`), when the folder says; it is often
   * less than the model's context (all-MiniLM-L6-v2: 256 of 512), and a longer text would give a
   * different vector from the one the model's users know.
   */
  readonly maxSeqLength?: number;
  /** Where this came from: the folder's sentence-transformers files, a GGUF file's pooling_type, or weft's default. */
  readonly source: 'sentence-transformers' | 'gguf' | 'default';
}

/** A decoder model folder without sentence-transformers files: last token, normalised. */
export const DEFAULT_EMBEDDING_CONFIG: EmbeddingConfig = { pooling: 'last', normalize: true, prompts: {}, source: 'default' };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

async function readJson(dir: string, name: string): Promise<unknown> {
  const bytes = await readModelFile(dir, name, MAX_FILE_BYTES.smallJson);
  return bytes === undefined ? undefined : parseJsonText(bytes.toString('utf8'), join(dir, name));
}

/** The folder's embedding settings; DEFAULT_EMBEDDING_CONFIG when it has no modules.json. */
export async function readEmbeddingConfig(dir: string): Promise<EmbeddingConfig> {
  const modulesFile = join(dir, 'modules.json');
  const modules = await readJson(dir, 'modules.json');
  if (modules === undefined) return DEFAULT_EMBEDDING_CONFIG;
  if (!Array.isArray(modules) || !modules.every(isObject)) throw new ModelLoadError(`${modulesFile}: expected a list of modules`, modulesFile);
  let pooling: Pooling | undefined;
  let normalize = false;
  let maxSeqLength: number | undefined;
  for (const [i, module] of modules.entries()) {
    const type = typeof module.type === 'string' ? module.type : '';
    const kind = type.slice(type.lastIndexOf('.') + 1);
    const path = typeof module.path === 'string' ? module.path : '';
    if (kind === 'Transformer' && i === 0) maxSeqLength = await readMaxSeqLength(dir, path);
    else if (kind === 'Pooling' && pooling === undefined) pooling = await readPooling(dir, path);
    else if (kind === 'Normalize') normalize = true;
    else throw new UnsupportedModelError(`${modulesFile}: module ${i} (${type || 'no type'}) is not supported; weft runs a transformer, then one Pooling, then Normalize`);
  }
  if (pooling === undefined) throw new UnsupportedModelError(`${modulesFile}: lists no Pooling module; weft needs one to know how to pool the token states`);
  const settings = await readJson(dir, 'config_sentence_transformers.json');
  const { prompts, defaultPromptName } = readPrompts(settings, join(dir, 'config_sentence_transformers.json'));
  return {
    pooling, normalize, prompts, ...(defaultPromptName !== undefined && { defaultPromptName }), ...(maxSeqLength !== undefined && { maxSeqLength }),
    source: 'sentence-transformers',
  };
}

/**
 * A GGUF file's `{arch}.pooling_type` (llama.cpp's enum: 0 none, 1 mean, 2 cls,
 * 3 last, 4 rank), which its converter writes for embedding and reranking
 * models. GGUF has no Normalize module: llama.cpp L2-normalises embeddings by
 * default, and so does weft. A file without the key is a generation model,
 * embedded with the decoder default. Returns an error (thrown by embed()) for
 * the types weft does not embed with; for type 0 (per-token vectors) the
 * `embedding.pooling` option, when given, says how to pool.
 */
export function ggufEmbeddingConfig(poolingType: unknown, file: string, askedPooling?: Pooling): EmbeddingConfig | Error {
  if (poolingType === undefined) return DEFAULT_EMBEDDING_CONFIG;
  const pooling = ([askedPooling, 'mean', 'cls', 'last'] as const)[poolingType as number];
  if (pooling !== undefined) return { pooling, normalize: true, prompts: {}, source: 'gguf' };
  if (poolingType === 0)
    return new UnsupportedModelError(`${file}: pooling type 0 (none: one vector per token) is not supported; pass Pipeline.create's embedding: { pooling: 'mean' | 'cls' | 'last' } to pool`);
  if (poolingType === 4) return new UnsupportedModelError(`${file}: pooling type 4 (rank) marks a reranker, which gives scores, not embeddings`);
  return new ModelLoadError(`${file}: pooling_type ${JSON.stringify(poolingType)} is not one of llama.cpp's (0 none, 1 mean, 2 cls, 3 last, 4 rank)`, file);
}

/**
 * What sentence-transformers cuts a text to: `max_seq_length` in the Transformer module's
 * sentence_bert_config.json (published models), else tokenizer_config.json's `model_max_length`
 * (what sentence-transformers 6 saves instead), which transformers sets to a huge number when it
 * means "no limit"; that, or none, leaves the model's context as the limit.
 */
async function readMaxSeqLength(dir: string, path: string): Promise<number | undefined> {
  const name = join(path, 'sentence_bert_config.json');
  const settings = await readJson(dir, name);
  if (settings !== undefined && !isObject(settings)) throw new ModelLoadError(`${join(dir, name)}: expected a JSON object`, join(dir, name));
  const given = settings?.max_seq_length;
  if (given !== undefined && given !== null) {
    if (!Number.isSafeInteger(given) || (given as number) < 1) throw new ModelLoadError(`${join(dir, name)}: max_seq_length must be a positive integer, got ${JSON.stringify(given)}`, join(dir, name));
    return given as number;
  }
  const tokenizer = await readJson(dir, join(path, 'tokenizer_config.json'));
  const limit = isObject(tokenizer) ? tokenizer.model_max_length : undefined;
  return Number.isSafeInteger(limit) && (limit as number) >= 1 && (limit as number) < 1e7 ? (limit as number) : undefined;
}

/** 1_Pooling/config.json: `pooling_mode: "mean"` (sentence-transformers 6) or one `pooling_mode_*_tokens: true` (earlier). */
async function readPooling(dir: string, path: string): Promise<Pooling> {
  const name = join(path, 'config.json');
  const file = join(dir, name);
  const config = await readJson(dir, name);
  if (!isObject(config)) throw new ModelLoadError(`${file}: missing or not a JSON object (the Pooling module's settings)`, file);
  let modes: string[];
  if (config.pooling_mode !== undefined) {
    const mode = config.pooling_mode;
    modes = Array.isArray(mode) ? mode.map(String) : [String(mode)];
  } else {
    const flags: Record<string, string> = {
      pooling_mode_cls_token: 'cls', pooling_mode_mean_tokens: 'mean', pooling_mode_lasttoken: 'lasttoken',
      pooling_mode_max_tokens: 'max', pooling_mode_mean_sqrt_len_tokens: 'mean_sqrt_len_tokens', pooling_mode_weightedmean_tokens: 'weightedmean',
    };
    modes = Object.entries(flags).filter(([key]) => config[key] === true).map(([, mode]) => mode);
  }
  if (modes.length !== 1) throw new UnsupportedModelError(`${file}: ${modes.length === 0 ? 'no pooling mode is set' : `pooling modes ${modes.join(' + ')} are combined`}; weft pools with exactly one of cls, mean, lasttoken`);
  const pooling = ({ cls: 'cls', mean: 'mean', lasttoken: 'last' } as const)[modes[0] as 'cls' | 'mean' | 'lasttoken'];
  if (pooling === undefined) throw new UnsupportedModelError(`${file}: pooling mode ${JSON.stringify(modes[0])} is not supported (cls, mean, lasttoken)`);
  if (config.include_prompt === false && pooling !== 'last')
    throw new UnsupportedModelError(`${file}: include_prompt false (pooling without the prompt's tokens) is not supported`);
  return pooling;
}

function readPrompts(settings: unknown, file: string): { prompts: Record<string, string>; defaultPromptName?: string } {
  if (settings === undefined) return { prompts: {} };
  if (!isObject(settings)) throw new ModelLoadError(`${file}: expected a JSON object`, file);
  const prompts: Record<string, string> = {};
  if (settings.prompts !== undefined && settings.prompts !== null) {
    if (!isObject(settings.prompts)) throw new ModelLoadError(`${file}: "prompts" must map names to texts`, file);
    for (const [name, text] of Object.entries(settings.prompts)) {
      if (typeof text !== 'string') throw new ModelLoadError(`${file}: prompt ${JSON.stringify(name)} must be a string`, file);
      prompts[name] = text;
    }
  }
  const named = settings.default_prompt_name;
  if (named === undefined || named === null) return { prompts };
  if (typeof named !== 'string' || prompts[named] === undefined)
    throw new ModelLoadError(`${file}: default_prompt_name ${JSON.stringify(named)} names no prompt`, file);
  return { prompts, defaultPromptName: named };
}

/** Pipeline.create's `embedding` option: overrides of the folder's settings. */
export interface EmbeddingOptions {
  /** How token states are pooled: 'last' (decoder embedders), 'mean' or 'cls'. */
  readonly pooling?: Pooling;
  /** Whether embeddings are L2-normalised. */
  readonly normalize?: boolean;
  /** Named prompts for embed()'s promptName, added to the folder's. */
  readonly prompts?: Readonly<Record<string, string>>;
}

const POOLINGS: readonly Pooling[] = ['last', 'mean', 'cls'];

/** Checks the `embedding` option (InvalidOptionError naming the field); undefined passes. */
export function checkEmbeddingOptions(options: unknown): void {
  if (options === undefined) return;
  if (!isObject(options)) throw new InvalidOptionError('embedding', 'expected an object { pooling?, normalize?, prompts? }');
  for (const key of Object.keys(options))
    if (!['pooling', 'normalize', 'prompts'].includes(key)) throw new InvalidOptionError(`embedding.${key}`, 'is not an embedding option (pooling, normalize, prompts)');
  if (options.pooling !== undefined && !POOLINGS.includes(options.pooling as Pooling))
    throw new InvalidOptionError('embedding.pooling', `expected one of ${POOLINGS.join(', ')}, got ${JSON.stringify(options.pooling)}`);
  if (options.normalize !== undefined && typeof options.normalize !== 'boolean') throw new InvalidOptionError('embedding.normalize', 'must be a boolean');
  if (options.prompts !== undefined && (!isObject(options.prompts) || Object.values(options.prompts).some((v) => typeof v !== 'string')))
    throw new InvalidOptionError('embedding.prompts', 'must map prompt names to strings');
}

/** The folder's settings with the option's overrides (checked by checkEmbeddingOptions). */
export function withEmbeddingOptions(config: EmbeddingConfig, options: EmbeddingOptions | undefined): EmbeddingConfig {
  if (options === undefined) return config;
  return {
    ...config,
    ...(options.pooling !== undefined && { pooling: options.pooling }),
    ...(options.normalize !== undefined && { normalize: options.normalize }),
    prompts: { ...config.prompts, ...options.prompts },
  };
}
