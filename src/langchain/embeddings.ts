/**
 * WeftEmbeddings: LangChain.js's Embeddings over a pipeline's embed(), for
 * vector stores and retrievers. Queries and documents may take different
 * named prompts of the model (config_sentence_transformers.json), as
 * instruction-tuned embedders such as Qwen3-Embedding expect. Lifetime as
 * ChatWeft's: a Pipeline you pass stays yours; options or a folder are opened
 * on first use and closed in close().
 */
import { Embeddings, type EmbeddingsParams } from '@langchain/core/embeddings';
import type { EmbedOptions } from '../embeddings/embed.js';
import { pipelineSource, type PipelineInput, type PipelineSource } from '../integrations/pipeline-source.js';

export interface WeftEmbeddingsFields extends EmbeddingsParams {
  /** A Pipeline you opened (you close it), or Pipeline.create options / a model folder (WeftEmbeddings opens and closes it). */
  readonly pipeline: PipelineInput;
  /** The model's prompt for embedQuery (e.g. "query"); default: none, or the folder's default prompt. */
  readonly queryPromptName?: string;
  /** The model's prompt for embedDocuments (e.g. "document"). */
  readonly documentPromptName?: string;
  readonly dimensions?: number;
  readonly normalize?: boolean;
  readonly truncate?: boolean;
}

export class WeftEmbeddings extends Embeddings implements AsyncDisposable {
  readonly #source: PipelineSource;
  readonly #common: Omit<EmbedOptions, 'promptName'>;
  readonly #queryPrompt: string | undefined;
  readonly #documentPrompt: string | undefined;

  constructor(fields: WeftEmbeddingsFields) {
    const { pipeline, queryPromptName, documentPromptName, dimensions, normalize, truncate, ...params } = fields ?? ({} as WeftEmbeddingsFields);
    // No retries unless asked: a failure here is a typed error (bad input, an abort), not a flaky network.
    super({ maxRetries: 0, ...params });
    this.#source = pipelineSource(fields, 'WeftEmbeddings');
    void pipeline;
    this.#queryPrompt = queryPromptName;
    this.#documentPrompt = documentPromptName;
    this.#common = {
      ...(dimensions !== undefined && { dimensions }),
      ...(normalize !== undefined && { normalize }),
      ...(truncate !== undefined && { truncate }),
    };
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    return this.#embed(documents, this.#documentPrompt);
  }

  async embedQuery(query: string): Promise<number[]> {
    return (await this.#embed([query], this.#queryPrompt))[0]!;
  }

  /** Closes the pipeline if WeftEmbeddings opened it. */
  close(): Promise<void> {
    return this.#source.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #embed(texts: string[], promptName: string | undefined): Promise<number[][]> {
    const pipeline = await this.#source.get();
    const options: EmbedOptions = { ...this.#common, ...(promptName !== undefined && { promptName }) };
    const { embeddings } = await this.caller.callWithOptions({}, () => pipeline.embed(texts, options));
    return embeddings.map((v) => Array.from(v));
  }
}
