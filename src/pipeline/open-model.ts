/**
 * Opening a model for a pipeline: its backend, tokenizer, chat template and
 * generation defaults (loaded from a model folder, or the user's own), then
 * the KV cache planned over the byte budget and allocated on the backend.
 */

import type { Backend } from '../backends/backend.js';
import { KvCacheManager } from '../engine/kv/kv-cache-manager.js';
import { planPools } from '../engine/kv/sizing.js';
import { InvalidOptionError } from '../errors.js';
import { checkModelFolder } from '../model-files/model-folder.js';
import type { ChatTemplate } from '../text/chat-template.js';
import type { GenerationDefaults, Tokenizer } from '../text/types.js';
import type { PipelineOptions, ResolvedPipelineOptions } from './options.js';

export interface OpenedModel {
  readonly backend: Backend;
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
  readonly kv: KvCacheManager;
}

type ModelParts = Omit<OpenedModel, 'kv'>;

/** A backend weft loaded is disposed again if the cache cannot be set up; a user's backend is the user's. */
export async function openModel(options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<OpenedModel> {
  const parts = options.backend !== undefined ? customParts(options) : await loadModelParts(options, resolved);
  try {
    return { ...parts, kv: await allocateKvCache(parts.backend, resolved) };
  } catch (error) {
    if (options.backend === undefined) await parts.backend.dispose();
    throw error;
  }
}

/** Splits the byte budget over the model's pools and allocates them on the backend. */
async function allocateKvCache(backend: Backend, resolved: ResolvedPipelineOptions): Promise<KvCacheManager> {
  const specs = planPools(backend.shape, resolved.kvBytes, resolved.precision, resolved.blockSize, resolved.maxNumSeqs);
  if (specs.some((spec) => spec.numBlocks < 2)) {
    throw new InvalidOptionError('kvCache.size', `${resolved.kvBytes} bytes cannot hold a single block of this model`);
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
  };
}

async function loadModelParts(options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<ModelParts> {
  const modelDir = options.model!;
  await checkModelFolder(modelDir);
  const [{ loadText }, { CpuBackend }] = await Promise.all([import('../text/load-text.js'), import('../backends/cpu/cpu-backend.js')]);
  const text = await loadText(modelDir);
  const backend = await CpuBackend.load(modelDir, {
    ...(resolved.threads !== undefined && { threads: resolved.threads }),
    ...(resolved.quantize !== undefined && { quantize: resolved.quantize }),
    ...(options.onProgress && { onProgress: options.onProgress }),
  });
  return { backend, tokenizer: text.tokenizer, chatTemplate: text.chatTemplate, generationDefaults: text.generationDefaults };
}
