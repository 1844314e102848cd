/**
 * Fidelity beside the speed figures: weft's and node-llama-cpp's greedy ids
 * on the same GGUF file, for a few prompts, compared token for token.
 *
 *   tsx bench/vs-llama-cpp/greedy.ts --model file.gguf [--quick] [--prompts 3] [--tokens 12] [--threads 2]
 * (--quick: a file of make-model.ts's quick shape)
 *   tsx bench/vs-llama-cpp/greedy.ts --model file.gguf --reference reference.json [--tokens 64]
 * (a shared model's reference prompts: each case's prompt_ids, and its greedy_ids beside the two)
 *
 * Prints one line per prompt (the first position where the two differ, if
 * any) and a last JSON line {prompts, tokens, identical, firstDifferences}.
 * Exits 1 when a prompt differs.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FULL, QUICK } from './make-model.js';
import { promptIds } from './scenarios.js';

const { values } = parseArgs({
  options: { model: { type: 'string' }, quick: { type: 'boolean' }, prompts: { type: 'string', default: '3' }, first: { type: 'string', default: '0' }, tokens: { type: 'string', default: '12' }, reference: { type: 'string' }, threads: { type: 'string', default: '2' } },
});
const file = values.model!;
const tokens = Number(values.tokens), threads = Number(values.threads);
const cases = values.reference === undefined ? undefined : (JSON.parse(readFileSync(values.reference, 'utf8')) as { cases: { prompt_ids: number[]; greedy_ids: number[] }[] }).cases;
// Regular ids only (bytes and merges), as the speed benchmark's prompts (run.ts).
const vocab = (values.quick ? QUICK : FULL).merges + 256;
const inputs = cases?.map((c) => c.prompt_ids) ?? Array.from({ length: Number(values.prompts) }, (_, p) => promptIds(16, 500 + Number(values.first) + p, vocab));
const prompts = inputs.length;

async function weftIds(): Promise<number[][]> {
  const { Pipeline } = await import('../../src/index.js');
  const pipe = await Pipeline.create({ model: file, threads });
  try {
    const out: number[][] = [];
    for (const prompt of inputs) out.push((await pipe.generate(prompt, { maxTokens: tokens, temperature: 0, ignoreEos: true })).tokenIds);
    return out;
  } finally {
    await pipe.close();
  }
}

async function llamaIds(): Promise<number[][]> {
  const here = dirname(fileURLToPath(import.meta.url));
  const { getLlama } = (await import(join(here, 'node_modules', 'node-llama-cpp', 'dist', 'index.js'))) as {
    getLlama: (o: object) => Promise<{ loadModel(o: object): Promise<any>; dispose(): Promise<void> }>;
  };
  const llama = await getLlama({ build: 'never', gpu: false, maxThreads: threads, logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: file });
  const context = await model.createContext({ sequences: 1, contextSize: 256, threads: { ideal: threads, min: threads } });
  try {
    const out: number[][] = [];
    for (const prompt of inputs) {
      const sequence = context.getSequence();
      const ids: number[] = [];
      for await (const id of sequence.evaluate(prompt, { temperature: 0 }) as AsyncIterable<number>) {
        ids.push(id);
        if (ids.length >= tokens) break;
      }
      sequence.dispose();
      out.push(ids);
    }
    return out;
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
}

const ours = await weftIds();
const theirs = await llamaIds();
const firstDifferences = ours.map((ids, p) => {
  const at = ids.findIndex((id, i) => id !== theirs[p]![i]);
  process.stderr.write(`prompt ${p}: ${at < 0 ? `same ${tokens} ids` : `differs at token ${at}`}\n  weft  ${ids.join(' ')}\n  llama ${theirs[p]!.join(' ')}\n`);
  return at;
});
const identical = firstDifferences.filter((at) => at < 0).length;
// Against the reference (a float32 forward pass): how many leading ids each side keeps.
const agree = (ids: number[], ref: number[]): number => {
  const at = ids.findIndex((id, i) => i >= ref.length || id !== ref[i]);
  return at < 0 ? ids.length : at;
};
const reference = cases && { weft: ours.map((ids, p) => agree(ids, cases[p]!.greedy_ids)), llama: theirs.map((ids, p) => agree(ids, cases[p]!.greedy_ids)) };
console.log(JSON.stringify({ prompts, tokens, identical, firstDifferences, ...(reference && { leadingIdsEqualToReference: reference }) }));
process.exitCode = identical === prompts ? 0 : 1;
