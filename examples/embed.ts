/**
 * Semantic search in a few lines: embed some documents once, then rank them
 * against a query by cosine similarity (the vectors are normalised, so that is
 * a dot product). Embedding requests run through the same engine as chats.
 *
 *   npx tsx examples/embed.ts [embedding-model-folder [query-prompt-name]]
 *
 * With a sentence-transformers folder (e.g. Qwen3-Embedding-0.6B, whose
 * queries take its prompt "query") its pooling and normalisation are used.
 * Without one it runs on weft's demo model, a chat model: the last token's
 * state, normalised, which ranks poorly, but shows the calls.
 */
import { Pipeline, demoModelPath } from 'weft';

const folder = process.argv[2] ?? demoModelPath();
const documents = [
  'The paged KV cache holds keys and values in fixed-size blocks.',
  'Continuous batching adds and removes requests between steps.',
  'A Gated DeltaNet layer keeps a fixed-size state per sequence.',
  'Electron apps run weft in their main process.',
];

await using pipe = await Pipeline.create({ model: folder });
const { embeddings, usage } = await pipe.embed(documents);
// Instruction-tuned embedders name a prompt for queries (config_sentence_transformers.json).
const promptName = process.argv[3];
const query = 'Where do the attention keys live?';
const [q] = (await pipe.embed(query, promptName === undefined ? {} : { promptName })).embeddings;

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
const ranked = documents.map((text, i) => ({ text, score: dot(q!, embeddings[i]!) })).sort((a, b) => b.score - a.score);
console.log(`${embeddings.length} documents, ${embeddings[0]!.length} dimensions, ${usage.promptTokens} tokens`);
for (const { text, score } of ranked) console.log(`${score.toFixed(3)}  ${text}`);
