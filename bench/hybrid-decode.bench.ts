/**
 * Decode cost against context length: a hybrid model (Qwen3.5: 3 of every 4
 * layers Gated DeltaNet, whose per-sequence state does not grow) against a
 * pure-attention Qwen3 of the same shape (Qwen3-0.6B: hidden 1024, 28 layers,
 * attention heads 16/8 x 128, FFN 3072, vocab 151,936, tied). The hybrid's 21
 * linear layers have 16 key and 16 value heads of 128 (Qwen3.5's), its 7
 * attention layers the same heads as Qwen3's (bench/hybrid-shape.ts). Random F16
 * weights, written once to the temp folder (1.2 GB each), quantized to Q8_0 at load.
 *
 *   npm run bench:hybrid-decode [-- --threads N --runs N --steps N --only qwen35]
 *
 * One-stream decode step time at 256 and at 4096 tokens of context (the cache
 * slots already hold that many positions; their content does not change the
 * cost), both models in alternating rounds, medians. The last line is one JSON
 * object with each model's step times and its ratio 4096 / 256. `--only qwen35`
 * runs the hybrid alone (for `perf record`: bench/perf-control.ts).
 */
import { cpus, loadavg } from 'node:os';
import { CpuBackend, LINEAR_STATE_POOL } from '../src/backends/cpu/cpu-backend.js';
import { buildBatch } from '../test/native/helpers.js';
import { perfDisable, perfEnable } from './perf-control.js';
import { type BenchModelName, benchModelFolder } from './hybrid-shape.js';

const args = process.argv.slice(2);
const value = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const threads = Number(value('threads', '2'));
const runs = Number(value('runs', '3'));
const steps = Number(value('steps', '16'));
const CONTEXTS = [256, 4096];
const only = value('only', '');
const names: BenchModelName[] = only === 'qwen35' || only === 'qwen3' ? [only] : ['qwen3', 'qwen35'];
const BLOCK_SIZE = 16;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Milliseconds per one-stream decode step at `context` tokens of context. */
async function stepMs(backend: CpuBackend, context: number): Promise<number> {
  const blocks = Array.from({ length: Math.ceil((context + steps) / BLOCK_SIZE) }, (_, b) => 1 + b);
  const hybrid = backend.shape.extraPools !== undefined;
  const times: number[] = [];
  for (let s = 0; s < steps; s++) {
    const started = process.hrtime.bigint();
    await backend.execute(buildBatch([{ tokens: [1 + (s % 1000)], pastLen: context + s, blocks, ...(hybrid && { stateSlot: 1 }) }]));
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return median(times);
}

async function main(): Promise<void> {
  const longest = Math.max(...CONTEXTS) + steps;
  const models: Array<{ name: string; backend: CpuBackend; ms: Record<number, number[]> }> = [];
  for (const name of names) {
    const backend = await CpuBackend.load(benchModelFolder(name), { threads, quantize: 'q8_0' });
    await backend.allocateCache({
      numBlocks: Math.ceil(longest / BLOCK_SIZE) + 1, blockSize: BLOCK_SIZE, precision: 'f16',
      ...(backend.shape.extraPools && { extraPoolBlocks: { [LINEAR_STATE_POOL]: 2 } }),
    });
    models.push({ name, backend, ms: Object.fromEntries(CONTEXTS.map((c) => [c, [] as number[]])) });
  }
  for (const m of models) await stepMs(m.backend, CONTEXTS[0]!); // warm-up
  perfEnable();
  for (let r = 0; r < runs; r++)
    for (let i = 0; i < models.length; i++) {
      const m = models[(i + r) % models.length]!;
      for (const c of r % 2 === 0 ? CONTEXTS : [...CONTEXTS].reverse()) m.ms[c]!.push(await stepMs(m.backend, c));
    }
  perfDisable();

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`weft decode step vs context: Qwen3-0.6B shape, pure attention vs hybrid (21 Gated DeltaNet + 7 attention layers), random weights as Q8_0`);
  console.log(`CPU: ${cpu} (${cpus().length} logical cores), kernels: ${models[0]!.backend.kernels}, ${threads} threads, ${runs} rounds of ${steps} steps, load average ${loadavg()[0]?.toFixed(2)}`);
  const result: Record<string, number | string> = { cpu, kernels: String(models[0]!.backend.kernels), threads };
  for (const m of models) {
    const [short, long] = CONTEXTS.map((c) => median(m.ms[c]!)) as [number, number];
    console.log(`${m.name.padEnd(7)} step at context ${CONTEXTS[0]}: ${short.toFixed(1)} ms   at ${CONTEXTS[1]}: ${long.toFixed(1)} ms   ratio ${(long / short).toFixed(2)}`);
    result[`${m.name}StepMs${CONTEXTS[0]}`] = Number(short.toFixed(2));
    result[`${m.name}StepMs${CONTEXTS[1]}`] = Number(long.toFixed(2));
    result[`${m.name}Growth`] = Number((long / short).toFixed(3));
  }
  for (const m of models) await m.backend.dispose();
  console.log(JSON.stringify(result));
}

await main();
