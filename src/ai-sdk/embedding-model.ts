/**
 * WeftEmbeddingModel: the AI SDK's EmbeddingModelV3 over a pipeline's embed(),
 * for `embed` / `embedMany` of `ai`. Calls may run in parallel: each is a set
 * of embedding requests in the same engine. `providerOptions.weft` takes
 * embed()'s own settings (promptName, prompt, dimensions, normalize, truncate).
 */

import type { EmbeddingModelV3, EmbeddingModelV3CallOptions, EmbeddingModelV3Result, SharedV3Warning } from '@ai-sdk/provider';
import type { EmbedOptions } from '../embeddings/embed.js';
import type { PipelineSource } from '../integrations/pipeline-source.js';

const SETTINGS = ['promptName', 'prompt', 'dimensions', 'normalize', 'truncate'] as const;

export interface WeftEmbeddingSettings {
  /** embed() options used for every call (providerOptions.weft overrides them per call). */
  readonly defaults?: Omit<EmbedOptions, 'signal'>;
  /** The most texts one doEmbed takes (embedMany splits larger lists). Default 256. */
  readonly maxEmbeddingsPerCall?: number;
}

export class WeftEmbeddingModel implements EmbeddingModelV3, AsyncDisposable {
  readonly specificationVersion = 'v3' as const;
  readonly provider = 'weft';
  readonly supportsParallelCalls = true;
  readonly maxEmbeddingsPerCall: number;

  constructor(
    readonly modelId: string,
    private readonly source: PipelineSource,
    private readonly settings: WeftEmbeddingSettings = {},
  ) {
    this.maxEmbeddingsPerCall = settings.maxEmbeddingsPerCall ?? 256;
  }

  async doEmbed(call: EmbeddingModelV3CallOptions): Promise<EmbeddingModelV3Result> {
    const warnings: SharedV3Warning[] = [];
    const given = (call.providerOptions?.weft ?? {}) as Record<string, unknown>;
    const perCall: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(given)) {
      if ((SETTINGS as readonly string[]).includes(key)) perCall[key] = value;
      else warnings.push({ type: 'unsupported', feature: `providerOptions.weft.${key}`, details: `known: ${SETTINGS.join(', ')}` });
    }
    const pipeline = await this.source.get();
    const { embeddings, usage } = await pipeline.embed(call.values, {
      ...this.settings.defaults,
      ...(perCall as EmbedOptions),
      ...(call.abortSignal !== undefined && { signal: call.abortSignal }),
    });
    return { embeddings: embeddings.map((v) => Array.from(v)), usage: { tokens: usage.promptTokens }, warnings };
  }

  /** Closes the pipeline if this model opened it. */
  close(): Promise<void> {
    return this.source.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
