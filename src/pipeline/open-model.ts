/**
 * Opening a model for a pipeline: its backend, tokenizer, chat template and
 * generation defaults (loaded from a model folder, or the user's own), then
 * the KV cache planned over the byte budget and allocated on the backend.
 */

import { totalmem } from 'node:os';
import type { Backend } from '../backends/backend.js';
import { KvCacheManager } from '../engine/kv/kv-cache-manager.js';
import { planPools } from '../engine/kv/sizing.js';
import { InvalidOptionError, TokenizerError } from '../errors.js';
import { checkModelFolder } from '../model-files/model-folder.js';
import type { ChatTemplate } from '../text/chat-template.js';
import type { GenerationDefaults, Tokenizer } from '../text/types.js';
import { TextSandbox } from '../text/sandbox/text-sandbox.js';
import type { PipelineOptions, ResolvedPipelineOptions } from './options.js';
import { inlinePromptText, type PromptText } from './prompt-text.js';

export interface OpenedModel {
  readonly backend: Backend;
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
  /** Where prompts are encoded and rendered: the text sandbox for a model folder's files, inline for the user's. */
  readonly promptText: PromptText;
  readonly kv: KvCacheManager;
}

type ModelParts = Omit<OpenedModel, 'kv'>;

/** A backend weft loaded is disposed again if the cache cannot be set up; a user's backend is the user's. */
export async function openModel(options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<OpenedModel> {
  const parts = options.backend !== undefined ? customParts(options) : await loadModelParts(options, resolved);
  try {
    checkTokenizerFits(parts.tokenizer, parts.backend.shape.vocabSize);
    return { ...parts, kv: await allocateKvCache(parts.backend, resolved) };
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
 * A tokenizer that can produce ids the model has no embedding for would fail
 * whole batches at run time; refuse it at load. (A model vocabulary larger
 * than the tokenizer's, padded for speed, is normal.)
 */
function checkTokenizerFits(tokenizer: Tokenizer, modelVocabSize: number): void {
  if (tokenizer.vocabSize > modelVocabSize)
    throw new TokenizerError(
      `the tokenizer has ids up to ${tokenizer.vocabSize - 1}, but the model's vocabulary has only ${modelVocabSize} entries: the tokenizer does not belong to this model`,
    );
}

/** Splits the byte budget over the model's pools and allocates them on the backend. */
async function allocateKvCache(backend: Backend, resolved: ResolvedPipelineOptions): Promise<KvCacheManager> {
  // Checked before anything is sized or allocated: a cache larger than the machine can never be filled.
  const physical = totalmem();
  if (resolved.kvBytes > physical) {
    throw new InvalidOptionError('kvCache.size', `${resolved.kvBytes} bytes is more than this machine's memory (${physical} bytes); give a smaller size, e.g. "1GB"`);
  }
  const specs = planPools(backend.shape, resolved.kvBytes, resolved.precision, resolved.blockSize, resolved.maxNumSeqs);
  if (specs.some((spec) => spec.numBlocks < 2)) {
    throw new InvalidOptionError('kvCache.size', `${resolved.kvBytes} bytes cannot hold a single block of this model`);
  }
  const largest = specs.find((spec) => spec.numBlocks > MAX_BLOCKS_PER_POOL);
  if (largest !== undefined) {
    throw new InvalidOptionError('kvCache.size', `${resolved.kvBytes} bytes make ${largest.numBlocks} blocks in the ${largest.name} pool, more than the ${MAX_BLOCKS_PER_POOL} weft manages; give a smaller size or a larger kvCache.blockSize`);
  }
  const kv = new KvCacheManager(specs, { prefixCaching: resolved.prefixCaching });
  const extraPoolBlocks = Object.fromEntries(specs.slice(1).map((spec) => [spec.name, spec.numBlocks]));
  await backend.allocateCache({
    numBlocks: specs[0]!.numBlocks,
    blockSize: resolved.blockSize,
    precision: resolved.precision,
    ...(specs.length > 1 && { extraPoolBlocks }),
  });
  return kv;
}

function customParts(options: PipelineOptions): ModelParts {
  return {
    backend: options.backend!,
    tokenizer: options.tokenizer!,
    chatTemplate: options.chatTemplate,
    generationDefaults: options.generationDefaults ?? {},
    promptText: inlinePromptText(options.tokenizer!, options.chatTemplate),
  };
}

async function loadModelParts(options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<ModelParts> {
  const modelDir = options.model!;
  await checkModelFolder(modelDir);
  const [{ loadText }, { CpuBackend }] = await Promise.all([import('../text/load-text.js'), import('../backends/cpu/cpu-backend.js')]);
  const text = await loadText(modelDir);
  const backend = await CpuBackend.load(modelDir, {
    ...(resolved.threads !== undefined && { threads: resolved.threads }),
    ...(options.onProgress && { onProgress: options.onProgress }),
  });
  return {
    backend,
    tokenizer: text.tokenizer,
    chatTemplate: text.chatTemplate,
    generationDefaults: text.generationDefaults,
    promptText: new TextSandbox(text.source, resolved.textLimits),
  };
}
