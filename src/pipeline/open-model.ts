/**
 * Opening a model for a pipeline: its backend, tokenizer, chat template and
 * generation defaults (loaded from a model folder or a .gguf file, or the user's own), then
 * the KV cache planned over the byte budget and allocated on the backend.
 */

import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { freemem, totalmem } from 'node:os';
import type { Backend, KvPrecision, ModelShape } from '../backends/backend.js';
import { checkModelShape } from '../backends/shape-check.js';
import { KvCacheManager } from '../engine/kv/kv-cache-manager.js';
import { defaultKvBytes, planPools } from '../engine/kv/sizing.js';
import { InvalidOptionError, ModelLoadError, TokenizerError, UnsupportedModelError } from '../errors.js';
import { isGgufPath } from '../model-files/gguf/path.js';
import { checkModelFolder } from '../model-files/model-folder.js';
import type { ChatTemplate } from '../text/chat-template.js';
import type { GenerationDefaults, Tokenizer } from '../text/types.js';
import { TextSandbox } from '../text/sandbox/text-sandbox.js';
import type { CpuBackend } from '../backends/cpu/cpu-backend.js';
import { DEFAULT_EMBEDDING_CONFIG, ggufEmbeddingConfig, readEmbeddingConfig, withEmbeddingOptions, type EmbeddingConfig } from '../embeddings/embedding-config.js';
import type { PipelineOptions, ResolvedPipelineOptions } from './options.js';
import { inlinePromptText, type PromptText } from './prompt-text.js';
import { readReranker, type Reranker } from '../embeddings/rerank-config.js';

export interface OpenedModel {
  /** Most tokens one step may schedule: the option, capped by the backend's per-token working memory. */
  readonly maxNumBatchedTokens: number;
  readonly backend: Backend;
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
  /** Where prompts are encoded and rendered: the text sandbox for a model folder's files, inline for the user's. */
  readonly promptText: PromptText;
  readonly kv: KvCacheManager;
  /**
   * How embed() pools: the folder's sentence-transformers settings with the
   * pipeline's overrides; or why they cannot be read, said by embed() (a
   * generation model is not refused for a broken modules.json).
   */
  readonly embedding: EmbeddingConfig | Error;
  /** The folder holds a base model without an LM head (ModelConfig.baseModel): it embeds, it does not generate. */
  readonly baseModel: boolean;
  /** What rerank() scores with, read from the folder on first use; rejects with why the model cannot rerank. */
  readonly reranker: () => Promise<Reranker>;
}

type ModelParts = Omit<OpenedModel, 'kv' | 'maxNumBatchedTokens'>;

/** A backend weft loaded is disposed again if the cache cannot be set up; a user's backend is the user's. */
export async function openModel(options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<OpenedModel> {
  const parts = options.backend !== undefined ? customParts(options) : await loadModelParts(options, resolved);
  try {
    checkTokenizerFits(parts.tokenizer, parts.backend.shape.vocabSize, options);
    const maxNumBatchedTokens = stepTokenBudget(parts.backend, options, resolved);
    const embedding = parts.embedding instanceof Error ? parts.embedding : withEmbeddingOptions(parts.embedding, options.embedding);
    return { ...parts, embedding, maxNumBatchedTokens, kv: await allocateKvCache(parts.backend, options, resolved) };
  } catch (error) {
    await parts.promptText.close();
    if (options.backend === undefined) await parts.backend.dispose();
    throw error;
  }
}

/**
 * Most blocks one pool may have. The manager keeps ~30 bytes of bookkeeping
 * per block in JS; 2^22 blocks (64M tokens at 16 a block) is far past any
 * real cache and keeps that under 150 MB, so no size can exhaust the heap.
 */
const MAX_BLOCKS_PER_POOL = 2 ** 22;

/**
 * The step's token budget, so that one step's working memory stays within a
 * quarter of physical memory. A default budget is lowered to fit (never below
 * maxNumSeqs: each running request decodes every step); a budget the user set
 * that cannot fit is an error naming the option.
 */
function stepTokenBudget(backend: Backend, options: PipelineOptions, resolved: ResolvedPipelineOptions): number {
  const perToken = backend.shape.stepBytesPerToken;
  if (perToken === undefined || perToken <= 0) return resolved.maxNumBatchedTokens;
  const fits = Math.floor(totalmem() / 4 / perToken);
  if (resolved.maxNumBatchedTokens <= fits) return resolved.maxNumBatchedTokens;
  const why = `a step costs this model ${perToken} bytes of working memory per token; ${fits} tokens fit in a quarter of this machine's memory`;
  if (options.scheduler?.maxNumBatchedTokens !== undefined)
    throw new InvalidOptionError('scheduler.maxNumBatchedTokens', `${resolved.maxNumBatchedTokens} is too many: ${why}`);
  if (fits < resolved.maxNumSeqs)
    throw new InvalidOptionError('scheduler.maxNumSeqs', `${resolved.maxNumSeqs} running requests need ${resolved.maxNumSeqs} tokens a step, but ${why}`);
  return fits;
}

/**
 * A tokenizer that can produce ids the model has no embedding for would fail
 * whole batches at run time; refuse it at load. (A model vocabulary larger
 * than the tokenizer's, padded for speed, is normal.) A model file's tokenizer
 * is a ModelLoadError naming the tokens past the vocabulary (typically an
 * added token given a wrong id); the user's own tokenizer is a TokenizerError.
 */
function checkTokenizerFits(tokenizer: Tokenizer, modelVocabSize: number, options: PipelineOptions): void {
  if (tokenizer.vocabSize <= modelVocabSize) return;
  const lastId = tokenizer.vocabSize - 1;
  if (options.backend !== undefined) {
    throw new TokenizerError(`the tokenizer has ids up to ${lastId}, but the model's vocabulary has only ${modelVocabSize} entries: the tokenizer does not belong to this model`);
  }
  const beyond = tokensBeyond(tokenizer, modelVocabSize);
  const named = beyond.slice(0, 3).map(({ token, id }) => `${JSON.stringify(token)} (id ${id})`).join(', ');
  const more = beyond.length > 3 ? ` and ${beyond.length - 3} more` : '';
  const model = options.model!;
  const file = isGgufPath(model) ? model : join(model, 'tokenizer.json');
  throw new ModelLoadError(
    `${file}: the ${beyond.length === 1 ? 'token' : 'tokens'} ${named}${more} ${beyond.length === 1 ? 'lies' : 'lie'} beyond the model's vocabulary of ${modelVocabSize} tokens (ids 0 to ${modelVocabSize - 1}), so the model has no embedding or logit for it. ` +
      `Give ${beyond.length === 1 ? 'it an id' : 'them ids'} below ${modelVocabSize} or remove ${beyond.length === 1 ? 'it' : 'them'} from added_tokens (and from tokenizer_config.json's added_tokens_decoder), or use the tokenizer that came with the model.`,
    file,
  );
}

/** Most ids looked at past the model's vocabulary for tokens to name (the highest id always has one). */
const MAX_IDS_SCANNED = 1 << 16;

/** The tokens with ids from `first` up, highest first; a scan of at most MAX_IDS_SCANNED ids down from the last. */
function tokensBeyond(tokenizer: Tokenizer, first: number): { token: string; id: number }[] {
  const found: { token: string; id: number }[] = [];
  const last = tokenizer.vocabSize - 1;
  for (let id = last; id >= first && last - id < MAX_IDS_SCANNED; id--) {
    const token = tokenizer.idToToken(id);
    if (token !== undefined) found.push({ token, id });
  }
  return found.reverse();
}

/** Splits the byte budget over the model's pools and allocates them on the backend. */
async function allocateKvCache(backend: Backend, options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<KvCacheManager> {
  // Checked before anything is sized or allocated: a cache larger than the machine can never be filled.
  const physical = totalmem();
  if (resolved.kvBytes !== undefined && resolved.kvBytes > physical) {
    throw new InvalidOptionError('kvCache.size', `${resolved.kvBytes} bytes is more than this machine's memory (${physical} bytes); give a smaller size, e.g. "1GB"`);
  }
  const blockSize = backendBlockSize(backend, options, resolved);
  const precision = kvPrecision(backend, resolved);
  const shape = withSettledPools(backend.shape, resolved, blockSize);
  // The default budget is sized from what is free now, with the weights already in memory,
  // and trimmed (never refused) where it would make more blocks than weft manages.
  let kvBytes = resolved.kvBytes ?? defaultKvBytes(shape, precision, blockSize, resolved.maxNumSeqs, freemem(), resolved.maxNumBatchedTokens);
  let specs = planPools(shape, kvBytes, precision, blockSize, resolved.maxNumSeqs);
  const tooMany = specs.find((spec) => spec.numBlocks > MAX_BLOCKS_PER_POOL);
  if (tooMany !== undefined && resolved.kvBytes === undefined) {
    kvBytes = Math.floor(kvBytes * ((MAX_BLOCKS_PER_POOL - 1) / tooMany.numBlocks));
    specs = planPools(shape, kvBytes, precision, blockSize, resolved.maxNumSeqs);
  } else if (tooMany !== undefined) {
    throw new InvalidOptionError('kvCache.size', `${kvBytes} bytes make ${tooMany.numBlocks} blocks in the ${tooMany.name} pool, more than the ${MAX_BLOCKS_PER_POOL} weft manages; give a smaller size or a larger kvCache.blockSize`);
  }
  if (specs.some((spec) => spec.numBlocks < 2)) {
    const fixed = (shape.extraPools ?? []).filter((pool) => pool.blockSize === Infinity);
    const state = fixed.map((pool) => `the ${pool.name} pool takes ${resolved.maxNumSeqs} x ${pool.bytesPerBlock} bytes (one block per running request, scheduler.maxNumSeqs ${resolved.maxNumSeqs})`);
    throw new InvalidOptionError('kvCache.size', `${kvBytes} bytes cannot hold a single block of this model${state.length > 0 ? `: ${state.join(', ')} before any attention block` : ''}; give a larger size or a smaller scheduler.maxNumSeqs`);
  }
  const kv = new KvCacheManager(specs, { prefixCaching: resolved.prefixCaching });
  const extras = specs.slice(1);
  await backend.allocateCache({
    numBlocks: specs[0]!.numBlocks,
    blockSize,
    precision,
    ...(extras.length > 0 && {
      extraPoolBlocks: Object.fromEntries(extras.map((spec) => [spec.name, spec.numBlocks])),
      extraPoolBlockSizes: Object.fromEntries(extras.map((spec) => [spec.name, spec.blockSize])),
    }),
  });
  return kv;
}

/**
 * The backend's shape with its extra pools as this pipeline runs them: a
 * checkpoints pool only with prefix caching on, every
 * kvCache.checkpointInterval tokens when given (a multiple of the block size).
 */
function withSettledPools(shape: ModelShape, resolved: ResolvedPipelineOptions, blockSize: number): ModelShape {
  if (shape.extraPools === undefined) {
    if (resolved.checkpointInterval !== undefined)
      throw new InvalidOptionError('kvCache.checkpointInterval', 'this model keeps no linear-attention state: only hybrid models (Qwen3.5) take a checkpoint interval');
    return shape;
  }
  const extraPools = shape.extraPools.flatMap((pool) => {
    if (!pool.checkpoints) return [pool];
    if (!resolved.prefixCaching) return [];
    const interval = resolved.checkpointInterval ?? pool.blockSize;
    if (interval % blockSize !== 0)
      throw new InvalidOptionError('kvCache.checkpointInterval', `${interval} tokens is not a multiple of kvCache.blockSize (${blockSize}); use e.g. ${Math.max(1, Math.round(interval / blockSize)) * blockSize}`);
    return [{ ...pool, blockSize: interval }];
  });
  return { ...shape, extraPools };
}

/** The precision the user chose, else the backend's default, else f32. */
function kvPrecision(backend: Backend, resolved: ResolvedPipelineOptions): KvPrecision {
  return resolved.precision ?? backend.shape.defaultKvPrecision ?? 'f32';
}

/** A backend whose cache layout fixes the block size (OpenVINO) decides it; else kvCache.blockSize. */
function backendBlockSize(backend: Backend, options: PipelineOptions, resolved: ResolvedPipelineOptions): number {
  const fixed = backend.shape.kvBlockSize;
  if (fixed === undefined) return resolved.blockSize;
  const asked = options.kvCache?.blockSize;
  if (asked !== undefined && asked !== fixed) {
    throw new InvalidOptionError('kvCache.blockSize', `this backend's cache uses ${fixed}-token blocks; leave kvCache.blockSize out or set it to ${fixed}`);
  }
  return fixed;
}

/** The user's backend, its declared shape checked first (the engine sizes its cache from it). */
function customParts(options: PipelineOptions): ModelParts {
  const backend: unknown = options.backend;
  if (typeof backend !== 'object' || backend === null) throw new InvalidOptionError('backend', `expected an object implementing Backend, got ${String(backend)}`);
  checkModelShape((backend as Backend).shape);
  return {
    backend: options.backend!,
    tokenizer: options.tokenizer!,
    chatTemplate: options.chatTemplate,
    generationDefaults: options.generationDefaults ?? {},
    promptText: inlinePromptText(options.tokenizer!, options.chatTemplate),
    embedding: DEFAULT_EMBEDDING_CONFIG,
    baseModel: false,
    reranker: cannotRerank('a pipeline over your own backend cannot rerank: weft reads a reranker\'s head from a model folder'),
  };
}

/** A reranker loader for models weft cannot rerank with. */
function cannotRerank(why: string): () => Promise<Reranker> {
  return () => Promise.reject(new UnsupportedModelError(why));
}

/** Reads the folder's reranker on the first call, and answers every later call with the same result. */
function rerankerOnce(modelDir: string, options: PipelineOptions, tokenizer: Tokenizer): () => Promise<Reranker> {
  let read: Promise<Reranker> | undefined;
  return () => (read ??= readReranker(modelDir, options.rerank, tokenizer));
}

async function loadModelParts(options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<ModelParts> {
  const modelDir = options.model!;
  if (isGgufPath(modelDir)) return loadGgufParts(modelDir, options, resolved);
  await checkModelFolder(modelDir);
  const device = chooseDevice(options.device, modelDir);
  const { loadText } = await import('../text/load-text.js');
  const text = await loadText(modelDir);
  const embedding = await readEmbeddingConfig(modelDir).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  const cpu = device === 'cpu' ? await loadCpuBackend(modelDir, options, resolved) : undefined;
  const backend = cpu ?? (await loadOpenVinoBackend(modelDir, device, options, resolved));
  return {
    backend,
    tokenizer: text.tokenizer,
    chatTemplate: text.chatTemplate,
    generationDefaults: text.generationDefaults,
    promptText: new TextSandbox(text.source, resolved.textLimits),
    embedding,
    baseModel: cpu?.config.baseModel === true,
    reranker: rerankerOnce(modelDir, options, text.tokenizer),
  };
}

/** A .gguf file carries its tokenizer and chat template too (docs/gguf.md); it runs on the CPU backend. */
async function loadGgufParts(file: string, options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<ModelParts> {
  if (options.device !== undefined && !['cpu', 'auto'].includes(options.device.toLowerCase()))
    throw new InvalidOptionError('device', `a .gguf file runs on "cpu", not ${JSON.stringify(options.device)}`);
  // The user named this file, so a symlink to it is followed; but only a regular file is read (a FIFO would hang).
  const info = await stat(file).catch(() => undefined);
  if (info === undefined) throw new ModelLoadError(`${file} does not exist`, file);
  if (!info.isFile()) throw new ModelLoadError(`${file} is not a regular file`, file);
  const [gguf, { ggufTextAssets }, { CpuBackend }] = await Promise.all([
    import('../model-files/gguf/index.js'),
    import('../text/gguf-tokenizer.js'),
    import('../backends/cpu/cpu-backend.js'),
  ]);
  const ggufFile = gguf.readGgufFile(file);
  const text = ggufTextAssets(ggufFile);
  const architecture = ggufFile.metadata.get('general.architecture');
  const embedding = ggufEmbeddingConfig(ggufFile.metadata.get(`${String(architecture)}.pooling_type`), file, options.embedding?.pooling);
  const backend = await CpuBackend.loadGguf(file, {
    ...(resolved.threads !== undefined && { threads: resolved.threads }),
    ...(resolved.quantize !== undefined && { quantize: resolved.quantize }),
    ...(resolved.mmap !== undefined && { mmap: resolved.mmap }),
    ...(options.onProgress && { onProgress: options.onProgress }),
  });
  return {
    backend,
    tokenizer: text.tokenizer,
    chatTemplate: text.chatTemplate,
    generationDefaults: text.generationDefaults,
    promptText: new TextSandbox(text.source, resolved.textLimits),
    embedding,
    baseModel: backend.config.baseModel === true,
    reranker: cannotRerank(`${file}: weft reranks from model folders (safetensors), not .gguf files yet`),
  };
}

async function loadCpuBackend(modelDir: string, options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<CpuBackend> {
  const { CpuBackend } = await import('../backends/cpu/cpu-backend.js');
  return CpuBackend.load(modelDir, {
    ...(resolved.threads !== undefined && { threads: resolved.threads }),
    ...(resolved.quantize !== undefined && { quantize: resolved.quantize }),
    ...(resolved.mmap !== undefined && { mmap: resolved.mmap }),
    ...(options.onProgress && { onProgress: options.onProgress }),
  });
}

/** The OpenVINO backend on an IR folder (src/backends/openvino, docs/openvino.md). */
async function loadOpenVinoBackend(modelDir: string, device: string, options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<Backend> {
  if (resolved.quantize !== undefined)
    throw new InvalidOptionError('quantize', `quantizing at load is a CPU backend option; the OpenVINO device "${device}" runs the IR's own weights`);
  const { OpenVinoBackend } = await import('../backends/openvino/openvino-backend.js');
  return OpenVinoBackend.load(modelDir, {
    device,
    kvPrecision: resolved.precision ?? 'f32',
    ...(options.openvino?.inferencePrecision !== undefined && { inferencePrecision: options.openvino.inferencePrecision }),
    ...(options.openvino?.properties !== undefined && { properties: options.openvino.properties }),
    ...(resolved.threads !== undefined && { threads: resolved.threads }),
  });
}

/**
 * "cpu", or the OpenVINO device to ask for. "auto": an OpenVINO IR folder goes to
 * OpenVINO ("openvino:AUTO": a GPU when OpenVINO reports one, else its CPU plugin),
 * anything else to "cpu".
 */
function chooseDevice(device: string | undefined, modelDir: string): string {
  const asked = (device ?? 'cpu').toLowerCase();
  if (asked === 'cpu') return 'cpu';
  if (asked === 'auto') return existsSync(join(modelDir, 'openvino_model.xml')) ? 'openvino:AUTO' : 'cpu';
  return device!;
}
