/**
 * A /rerank answer in the shape vLLM, llama.cpp's server and weft serve give
 * ({ results: [{ index, relevance_score }], usage }) as weft's RerankResult:
 * every document's score by index, and the ranking made here (so that
 * `topN` ranks the same way whichever server scored).
 */
import { rank, type RerankResult } from '../embeddings/rerank.js';
import { RemoteError } from '../errors.js';

export function rerankResultOf(answer: unknown, count: number, topN: number | undefined): RerankResult {
  const results = (answer as { results?: unknown })?.results;
  if (!Array.isArray(results)) throw new RemoteError('the server\'s rerank answer has no results list');
  const scores = new Array<number | undefined>(count).fill(undefined);
  for (const item of results as { index?: unknown; relevance_score?: unknown }[]) {
    const { index, relevance_score: score } = item ?? {};
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || typeof score !== 'number')
      throw new RemoteError(`the server's rerank answer has a result that is not { index in [0, ${count}), relevance_score: number }`);
    scores[index] = score;
  }
  const missing = scores.findIndex((score) => score === undefined);
  if (missing >= 0) throw new RemoteError(`the server's rerank answer scores ${results.length} of ${count} documents (none for documents[${missing}])`);
  const usage = (answer as { usage?: { prompt_tokens?: unknown; total_tokens?: unknown } }).usage;
  const promptTokens = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : typeof usage?.total_tokens === 'number' ? usage.total_tokens : 0;
  const all = scores as number[];
  return { scores: all, ranking: rank(all, topN), usage: { promptTokens } };
}
