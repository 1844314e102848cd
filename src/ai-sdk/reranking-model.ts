/**
 * WeftRerankingModel: the AI SDK's RerankingModelV3 over a pipeline's
 * rerank(), for `rerank` of `ai`. Object documents are scored as their JSON
 * text (what the SDK's own HTTP providers send for them). `providerOptions.weft`
 * takes rerank()'s own settings (instruction, truncate).
 */

import type { RerankingModelV3, RerankingModelV3CallOptions, SharedV3Warning } from '@ai-sdk/provider';
import type { RerankOptions } from '../embeddings/rerank.js';
import type { PipelineSource } from '../integrations/pipeline-source.js';

const SETTINGS = ['instruction', 'truncate'] as const;

export interface WeftRerankingSettings {
  /** rerank() options used for every call (providerOptions.weft overrides them per call). */
  readonly defaults?: Pick<RerankOptions, 'instruction' | 'truncate' | 'priority'>;
}

type DoRerankResult = Awaited<ReturnType<RerankingModelV3['doRerank']>>;

export class WeftRerankingModel implements RerankingModelV3, AsyncDisposable {
  readonly specificationVersion = 'v3' as const;
  readonly provider = 'weft';

  constructor(
    readonly modelId: string,
    private readonly source: PipelineSource,
    private readonly settings: WeftRerankingSettings = {},
  ) {}

  async doRerank(call: RerankingModelV3CallOptions): Promise<DoRerankResult> {
    const warnings: SharedV3Warning[] = [];
    const given = (call.providerOptions?.weft ?? {}) as Record<string, unknown>;
    const perCall: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(given)) {
      if ((SETTINGS as readonly string[]).includes(key)) perCall[key] = value;
      else warnings.push({ type: 'unsupported', feature: `providerOptions.weft.${key}`, details: `known: ${SETTINGS.join(', ')}` });
    }
    const documents = call.documents.type === 'text' ? call.documents.values : call.documents.values.map((value) => JSON.stringify(value));
    const pipeline = await this.source.get();
    const { ranking } = await pipeline.rerank(call.query, documents, {
      ...this.settings.defaults,
      ...(perCall as RerankOptions),
      ...(call.topN !== undefined && { topN: call.topN }),
      ...(call.abortSignal !== undefined && { signal: call.abortSignal }),
    });
    return { ranking: ranking.map(({ index, score }) => ({ index, relevanceScore: score })), warnings };
  }

  /** Closes the pipeline if this model opened it. */
  close(): Promise<void> {
    return this.source.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
