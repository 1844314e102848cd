/**
 * `createWeft` (an AI SDK provider over one pipeline) and `weft` (one model).
 *
 * Lifetime: whoever opens a pipeline closes it. Pass a Pipeline you opened and
 * it stays yours; pass options or a model folder and the provider (or model)
 * opens it on first use and closes it in close() / `await using`.
 */

import { basename } from 'node:path';
import type { ImageModelV3, ProviderV3 } from '@ai-sdk/provider';
import { UnsupportedModelError } from '../errors.js';
import type { PipelineApi } from '../pipeline/face.js';
import { WeftEmbeddingModel, type WeftEmbeddingSettings } from './embedding-model.js';
import { WeftLanguageModel, type WeftModelSettings } from './language-model.js';
import { WeftRerankingModel, type WeftRerankingSettings } from './reranking-model.js';
import { borrowed, isPipeline, pipelineSource, type PipelineInput, type PipelineSource } from '../integrations/pipeline-source.js';

export interface WeftProviderSettings extends WeftModelSettings {
  /** A Pipeline you opened (you close it), or Pipeline.create options / a model folder (the provider opens and closes it). */
  readonly pipeline: PipelineInput;
  /** The `modelId` models report when none is given. Default: the model folder's name, or "weft". */
  readonly modelId?: string;
}

export interface WeftProvider extends ProviderV3, AsyncDisposable {
  /** The language model over this provider's pipeline; `modelId` is only a label. */
  (modelId?: string): WeftLanguageModel;
  languageModel(modelId?: string): WeftLanguageModel;
  /** The embedding model over this provider's pipeline (its embed()); `modelId` is only a label. */
  embeddingModel(modelId?: string, settings?: WeftEmbeddingSettings): WeftEmbeddingModel;
  /** The AI SDK's older name for embeddingModel. */
  textEmbeddingModel(modelId?: string, settings?: WeftEmbeddingSettings): WeftEmbeddingModel;
  /** The reranking model over this provider's pipeline (its rerank()); `modelId` is only a label. */
  rerankingModel(modelId?: string, settings?: WeftRerankingSettings): WeftRerankingModel;
  /** The pipeline (opened now if the provider was given options). */
  pipeline(): Promise<PipelineApi>;
  /** Closes the pipeline if the provider opened it; a Pipeline you passed in stays open. */
  close(): Promise<void>;
}

export function createWeft(settings: WeftProviderSettings): WeftProvider {
  // Checks the shapes first: createWeft('path') or createWeft({ model }) get an InvalidOptionError saying how it is called.
  const source = pipelineSource(settings, 'createWeft');
  // Models share the provider's pipeline; closing it is the provider's job, not theirs.
  const shared: PipelineSource = { get: () => source.get(), close: () => Promise.resolve() };
  const defaultId = settings.modelId ?? modelName(settings.pipeline);
  const languageModel = (modelId?: string): WeftLanguageModel => new WeftLanguageModel(modelId ?? defaultId, shared, settings);
  const unsupported = (kind: string) => (): never => {
    throw new UnsupportedModelError(`weft serves language, embedding and reranking models only; it has no ${kind} models`);
  };
  const embeddingModel = (modelId?: string, embeddingSettings?: WeftEmbeddingSettings): WeftEmbeddingModel =>
    new WeftEmbeddingModel(modelId ?? defaultId, shared, embeddingSettings);
  return Object.assign(languageModel, {
    specificationVersion: 'v3' as const,
    languageModel,
    embeddingModel,
    textEmbeddingModel: embeddingModel,
    rerankingModel: (modelId?: string, rerankingSettings?: WeftRerankingSettings) => new WeftRerankingModel(modelId ?? defaultId, shared, rerankingSettings),
    imageModel: unsupported('image') as (modelId: string) => ImageModelV3,
    pipeline: () => source.get(),
    close: () => source.close(),
    [Symbol.asyncDispose]: () => source.close(),
  });
}

/**
 * One language model. `weft(pipeline)` runs on a Pipeline you opened and
 * close; `weft('models/weft-demo')` or `weft({ model, parsers, ... })` opens
 * one on first use, which the model's close() (or `await using`) closes.
 */
export function weft(modelOrPipeline: PipelineInput, settings: WeftModelSettings & { modelId?: string } = {}): WeftLanguageModel {
  const source = pipelineSource(modelOrPipeline, 'weft', settings);
  return new WeftLanguageModel(settings.modelId ?? modelName(modelOrPipeline), source, settings);
}

/**
 * One embedding model, as weft() is one language model: `weftEmbedding(pipeline)`
 * on a Pipeline you opened, or `weftEmbedding('models/my-embedder')`, which opens one
 * on first use and closes it in the model's close().
 */
export function weftEmbedding(modelOrPipeline: PipelineInput, settings: WeftEmbeddingSettings & { modelId?: string } = {}): WeftEmbeddingModel {
  const { modelId, ...rest } = settings;
  const source = pipelineSource(modelOrPipeline, 'weft', {});
  return new WeftEmbeddingModel(modelId ?? modelName(modelOrPipeline), source, rest);
}

/** One reranking model, as weftEmbedding() is one embedding model. */
export function weftReranking(modelOrPipeline: PipelineInput, settings: WeftRerankingSettings & { modelId?: string } = {}): WeftRerankingModel {
  const { modelId, ...rest } = settings;
  const source = pipelineSource(modelOrPipeline, 'weft', {});
  return new WeftRerankingModel(modelId ?? modelName(modelOrPipeline), source, rest);
}

function modelName(input: PipelineInput): string {
  const folder = typeof input === 'string' ? input : isPipeline(input) ? undefined : input.model;
  return folder !== undefined && folder.length > 0 ? basename(folder) : 'weft';
}
