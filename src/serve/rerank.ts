/**
 * POST /v1/rerank (and /rerank), in the shape vLLM and llama.cpp's server
 * use: { model, query, documents, top_n, return_documents } in,
 * { results: [{ index, relevance_score, document? }], usage } out, results
 * by descending score. A document is a string or a Cohere-style { text }.
 * weft's own fields: `instruction` (a yes/no reranker's task, as llama.cpp's
 * server names it) and `truncate`.
 */

import { randomBytes } from 'node:crypto';
import type { RerankOptions, RerankResult } from '../embeddings/rerank.js';
import { PromptTooLongError, UnsupportedModelError } from '../errors.js';
import { ApiError, badRequest } from './errors.js';
import { isJsonObject, optionalBoolean, optionalInteger, optionalString, requireObject } from './fields.js';
import { checkModel, type ServedModel } from './sampling-fields.js';

export interface RerankRequest {
  readonly query: string;
  readonly documents: string[];
  readonly options: RerankOptions;
  readonly returnDocuments: boolean;
}

export function parseRerankRequest(input: unknown, served: ServedModel): RerankRequest {
  const body = requireObject(input, 'the request body');
  checkModel(body, served);
  const query = body.query;
  if (typeof query !== 'string') throw badRequest('query must be a string', 'query');
  if (!Array.isArray(body.documents)) throw badRequest('documents must be an array of strings', 'documents');
  const documents = body.documents.map((doc: unknown, i) => {
    if (typeof doc === 'string') return doc;
    if (isJsonObject(doc) && typeof doc.text === 'string') return doc.text;
    throw badRequest(`documents[${i}] must be a string or { "text": string }`, `documents[${i}]`);
  });
  const topN = optionalInteger(body, 'top_n');
  if (topN !== undefined && topN < 1) throw badRequest('top_n must be a positive integer', 'top_n');
  const instruction = optionalString(body, 'instruction');
  const truncate = optionalBoolean(body, 'truncate');
  const options: RerankOptions = {
    ...(topN !== undefined && { topN }),
    ...(instruction !== undefined && { instruction }),
    ...(truncate !== undefined && { truncate }),
  };
  return { query, documents, options, returnDocuments: optionalBoolean(body, 'return_documents') ?? false };
}

export function rerankResponse(result: RerankResult, request: RerankRequest, model: string): object {
  return {
    id: `rerank-${randomBytes(12).toString('hex')}`,
    model,
    results: result.ranking.map(({ index, score }) => ({
      index,
      relevance_score: score,
      ...(request.returnDocuments && { document: { text: request.documents[index] } }),
    })),
    usage: { prompt_tokens: result.usage.promptTokens, total_tokens: result.usage.promptTokens },
  };
}

/**
 * What rerank() throws that the generic mapping would misplace: a pair over
 * the context names `documents` (not `messages`), and a model that cannot
 * rerank is the client's 400 (it asked the wrong server), not a server error.
 */
export function rerankApiError(error: unknown): unknown {
  if (error instanceof PromptTooLongError) return badRequest(error.message, 'documents', 'context_length_exceeded');
  if (error instanceof UnsupportedModelError) return new ApiError(400, 'invalid_request_error', error.message, 'model', 'model_not_supported');
  return error;
}
