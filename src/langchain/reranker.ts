/**
 * WeftReranker: LangChain.js's BaseDocumentCompressor over a pipeline's
 * rerank(), for ContextualCompressionRetriever: the retrieved documents come
 * back best first, the first `topN`, each with its score in
 * `metadata.relevanceScore` (as LangChain's hosted rerankers set it).
 * Lifetime as WeftEmbeddings': a Pipeline you pass stays yours; options or a
 * folder are opened on first use and closed in close().
 */
import type { DocumentInterface } from '@langchain/core/documents';
import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import type { RerankOptions } from '../embeddings/rerank.js';
import { pipelineSource, type PipelineInput, type PipelineSource } from '../integrations/pipeline-source.js';

export interface WeftRerankerFields {
  /** A Pipeline you opened (you close it), or Pipeline.create options / a model folder (WeftReranker opens and closes it). */
  readonly pipeline: PipelineInput;
  /** How many documents compressDocuments keeps; default 3. */
  readonly topN?: number;
  /** A yes/no reranker's task instruction (Qwen3-Reranker's <Instruct>). */
  readonly instruction?: string;
  readonly truncate?: boolean;
}

export class WeftReranker extends BaseDocumentCompressor implements AsyncDisposable {
  readonly #source: PipelineSource;
  readonly #topN: number;
  readonly #options: Omit<RerankOptions, 'topN' | 'signal'>;

  constructor(fields: WeftRerankerFields) {
    super();
    this.#source = pipelineSource(fields, 'WeftReranker');
    const { topN, instruction, truncate } = fields;
    this.#topN = topN ?? 3;
    this.#options = { ...(instruction !== undefined && { instruction }), ...(truncate !== undefined && { truncate }) };
  }

  /** The `topN` most relevant of `documents` to `query`, best first, each with metadata.relevanceScore. */
  async compressDocuments(documents: DocumentInterface[], query: string): Promise<DocumentInterface[]> {
    if (documents.length === 0) return [];
    const ranking = await this.rerank(documents.map((doc) => doc.pageContent), query, this.#topN);
    return ranking.map(({ index, relevanceScore }) => {
      const doc = documents[index]!;
      return { ...doc, metadata: { ...doc.metadata, relevanceScore } };
    });
  }

  /** Every document's index and score, best first (the first `topN` when given). */
  async rerank(documents: string[], query: string, topN?: number): Promise<{ index: number; relevanceScore: number }[]> {
    const pipeline = await this.#source.get();
    const { ranking } = await pipeline.rerank(query, documents, { ...this.#options, ...(topN !== undefined && { topN }) });
    return ranking.map(({ index, score }) => ({ index, relevanceScore: score }));
  }

  /** Closes the pipeline if WeftReranker opened it. */
  close(): Promise<void> {
    return this.#source.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
