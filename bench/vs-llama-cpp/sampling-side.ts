/**
 * node-llama-cpp's side of `npm run bench:sampling` (bench/sampling.bench.ts),
 * in its own process: loads the GGUF once, then runs what each stdin line asks,
 *   {"name": "sampled/16", "prompts": [[ids], ...], "tokens": 32, "salt": 1}
 * (every prompt one sequence, all at once, EOS ignored) and answers one JSON line
 * {tokPerS, mainMsPerToken}: aggregate tok/s over the whole run (prefill included)
 * and this process's main-thread CPU per generated token, as the weft side.
 *
 *   tsx bench/vs-llama-cpp/sampling-side.ts --model file.gguf --threads N --sequences 16
 *
 * The sampling settings are weft's (bench/sampling.bench.ts) in node-llama-cpp's
 * names; its defaults top-k 40 and top-p 0.95 are turned off where weft's
 * setting has none. The repetition and presence penalties go over the sequence's
 * tokens so far (prompt and output, as weft's repetition penalty; node-llama-cpp
 * applies the presence penalty to the same list). No logprobs: node-llama-cpp
 * asks for them per token through another call (evaluateWithMetadata), which
 * would measure that call rather than the sampler.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { model: { type: 'string' }, threads: { type: 'string', default: '2' }, sequences: { type: 'string', default: '16' } } });
const threads = Number(values.threads);
const here = dirname(fileURLToPath(import.meta.url));

/** The part of node-llama-cpp 3.21's API used here. */
interface NlcSequence {
  evaluate(tokens: number[], options: object): AsyncIterable<number>;
  dispose(): void;
}
interface NlcContext {
  getSequence(): NlcSequence;
  dispose(): Promise<void>;
}
const { getLlama } = (await import(join(here, 'node_modules', 'node-llama-cpp', 'dist', 'index.js'))) as {
  getLlama(options: object): Promise<{
    llamaCppRelease: { release: string };
    loadModel(options: { modelPath: string }): Promise<{ createContext(options: object): Promise<NlcContext>; dispose(): Promise<void> }>;
    dispose(): Promise<void>;
  }>;
};
const llama = await getLlama({ build: 'never', gpu: false, maxThreads: threads, logLevel: 'error' });
const model = await llama.loadModel({ modelPath: values.model! });
const context = await model.createContext({ sequences: Number(values.sequences), contextSize: 256, threads: { ideal: threads, min: threads }, batchSize: 512 });
const maps = readFileSync('/proc/self/maps', 'utf8');
const variant = /libggml-cpu-([\w-]+)\.so/.exec(maps)?.[1] ?? 'unknown';

/** weft's settings (bench/sampling.bench.ts SAMPLED, TOP_K, PENALTIES, GREEDY) as node-llama-cpp options. */
function optionsFor(kind: string, seed: number, tokens: number[]): object {
  switch (kind) {
    case 'greedy':
      return { temperature: 0 };
    case 'sampled':
      return { temperature: 0.7, topP: 0.9, topK: 0, seed };
    case 'topK':
      return { temperature: 0.7, topK: 40, topP: 1, seed };
    case 'penalties':
      return { temperature: 0.7, topP: 0.9, topK: 0, seed, repeatPenalty: { punishTokens: () => tokens, maxPunishTokens: 64, penalty: 1.1, presencePenalty: 0.2 } };
    default:
      throw new Error(`unknown case ${kind}`);
  }
}

async function generate(kind: string, prompt: number[], maxTokens: number, seed: number): Promise<number> {
  const sequence = context.getSequence();
  const tokens = [...prompt];
  try {
    let n = 0;
    for await (const token of sequence.evaluate(prompt, optionsFor(kind, seed, tokens))) {
      tokens.push(token);
      if (++n >= maxTokens) break;
    }
    return n;
  } finally {
    sequence.dispose();
  }
}

const mainThreadNs = (): number => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
console.log(JSON.stringify({ ready: true, kernels: `ggml-cpu-${variant} (llama.cpp ${llama.llamaCppRelease.release})` }));
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const job = JSON.parse(line) as { name: string; prompts: number[][]; tokens: number; salt: number };
  const kind = job.name.split('/')[0]!;
  const cpu = mainThreadNs();
  const wall = performance.now();
  const counts = await Promise.all(job.prompts.map((p, s) => generate(kind, p, job.tokens, job.salt * 100 + s)));
  const ms = performance.now() - wall;
  const tokens = counts.reduce((a, b) => a + b, 0);
  // sequence.evaluate() ends at an end-of-generation token, which random weights sample now and
  // then (it has no ignoreEos): the rate is over the tokens it did generate, and the shortfall is said.
  if (tokens === 0) throw new Error('node-llama-cpp generated no tokens');
  if (tokens !== job.tokens * job.prompts.length) process.stderr.write(`node-llama-cpp ${job.name}: ${tokens} of ${job.tokens * job.prompts.length} tokens (an end-of-generation token was sampled)\n`);
  console.log(JSON.stringify({ tokPerS: (tokens / ms) * 1000, mainMsPerToken: (mainThreadNs() - cpu) / 1e6 / tokens }));
}
await context.dispose();
await model.dispose();
await llama.dispose();
