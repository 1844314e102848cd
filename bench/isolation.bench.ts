/**
 * The per-token cost of `isolation: 'process'`: the same greedy workload on an
 * in-process pipeline and an isolated one (engine and native backend in a
 * child, parts over IPC), alternating rounds, medians.
 * Run: npx tsx bench/isolation.bench.ts [modelDir] [concurrent]
 */

import { cpus } from 'node:os';
import { Pipeline, type ModelPipeline } from '../src/index.js';

const modelDir = process.argv[2] ?? new URL('../models/weft-demo/', import.meta.url).pathname;
const CONCURRENT = Number(process.argv[3] ?? 8);
const TOKENS = 64;
const ROUNDS = 9;

const inProcess = await Pipeline.create({ model: modelDir, threads: 1 });
const isolated = await Pipeline.create({ model: modelDir, threads: 1, isolation: 'process' });

async function round(pipe: ModelPipeline): Promise<number> {
  const start = performance.now();
  const results = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => pipe.generate(`Request ${i}: the weather in Paris`, { maxTokens: TOKENS, temperature: 0, ignoreEos: true })),
  );
  const tokens = results.reduce((sum, r) => sum + r.tokenIds.length, 0);
  return ((performance.now() - start) * 1000) / tokens; // microseconds per token
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
await round(inProcess);
await round(isolated);
const times = { inProcess: [] as number[], isolated: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  times.inProcess.push(await round(inProcess));
  times.isolated.push(await round(isolated));
}
await inProcess.close();
await isolated.close();
const a = median(times.inProcess);
const b = median(times.isolated);
console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'}, native backend 1 thread; ${modelDir}; ${CONCURRENT} concurrent x ${TOKENS} greedy tokens; ${ROUNDS} alternating rounds, medians`);
console.log(`in-process ${a.toFixed(0)} us/token, isolated ${b.toFixed(0)} us/token: +${(b - a).toFixed(0)} us/token (${((b / a - 1) * 100).toFixed(1)}%)`);
