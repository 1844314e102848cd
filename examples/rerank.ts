/**
 * Retrieve, then rerank: a reranker reads the query and each candidate
 * together and scores how well the candidate answers it, which orders a
 * retriever's shortlist better than vector similarity alone. The pairs run
 * through the same engine as chats, and share the prompt's start in the
 * prefix cache.
 *
 *   npx tsx examples/rerank.ts <reranker-folder> [instruction]
 *
 * The folder is a yes/no reranker such as Qwen3-Reranker-0.6B (docs/reranking.md).
 */
import { Pipeline } from 'weft';

const folder = process.argv[2];
if (folder === undefined) {
  console.error('usage: npx tsx examples/rerank.ts <reranker-folder> [instruction]   (e.g. models/Qwen3-Reranker-0.6B)');
  process.exit(1);
}
const candidates = [
  'The paged KV cache holds keys and values in fixed-size blocks.',
  'Continuous batching adds and removes requests between steps.',
  'A Gated DeltaNet layer keeps a fixed-size state per sequence.',
  'Electron apps run weft in their main process.',
];
const query = 'Where do the attention keys live?';

await using pipe = await Pipeline.create({ model: folder });
const instruction = process.argv[3];
const { ranking, usage } = await pipe.rerank(query, candidates, { topN: 3, ...(instruction !== undefined && { instruction }) });
console.log(`${candidates.length} candidates, ${usage.promptTokens} tokens; the best ${ranking.length}:`);
for (const { index, score } of ranking) console.log(`${score.toFixed(4)}  ${candidates[index]}`);
