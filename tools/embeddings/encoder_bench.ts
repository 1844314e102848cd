/**
 * Encoder throughput, weft's side of tools/embeddings/encoder_bench.py: the
 * same folder and the same shapes of token ids ([CLS], --tokens - 2 random
 * ids, [SEP]; drawn here with a small generator of its own, not torch's: the
 * values do not change the work). Prints one JSON line: texts/s (median of
 * --repeats timed embed() calls after one warm-up).
 *
 *   npx tsx tools/embeddings/encoder_bench.ts /tmp/minilm-random --batch 32 --tokens 16 --threads 2
 */
import { parseArgs } from 'node:util';
import { Pipeline } from '../../src/index.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { batch: { type: 'string', default: '32' }, tokens: { type: 'string', default: '16' }, threads: { type: 'string', default: '2' }, repeats: { type: 'string', default: '5' } },
});
const [folder] = positionals;
if (folder === undefined) throw new Error('usage: encoder_bench.ts <folder> [--batch N] [--tokens N] [--threads N] [--repeats N]');
const batch = Number(values.batch), tokens = Number(values.tokens), threads = Number(values.threads), repeats = Number(values.repeats);

let seed = 7;
const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed);
const texts = Array.from({ length: batch }, () => [2, ...Array.from({ length: tokens - 2 }, () => 1000 + (next() % 29000)), 3]);

const pipe = await Pipeline.create({ model: folder, threads, scheduler: { maxNumBatchedTokens: Math.max(2048, batch * tokens), maxNumSeqs: Math.max(64, batch) } });
await pipe.embed(texts);
const runs: number[] = [];
for (let i = 0; i < repeats; i++) {
  const start = performance.now();
  await pipe.embed(texts);
  runs.push((performance.now() - start) / 1000);
}
runs.sort((a, b) => a - b);
console.log(JSON.stringify({ runner: 'weft', batch, tokens, threads, texts_per_s: batch / runs[Math.floor(runs.length / 2)]! }));
await pipe.close();
