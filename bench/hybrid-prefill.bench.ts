/**
 * Prefill speed of a hybrid (Qwen3.5: 21 Gated DeltaNet + 7 gated attention
 * layers) against a pure-attention Qwen3 of the same shape (Qwen3-0.6B; both
 * from bench/hybrid-shape.ts, random F16 weights quantized to Q8_0 at load, as
 * bench:hybrid-decode runs them).
 *
 *   npm run bench:hybrid-prefill [-- --threads N --runs N --step N --only qwen35 --lengths 512,2048]
 *
 * Prefill tokens/s of one prompt of each length (512 and 2048 tokens), from
 * position 0 (a hybrid's state slot is zeroed there, so every run starts from
 * the same state), the prompt in one step or in steps of --step tokens as the
 * engine would split it. Both models in alternating rounds, medians. The last
 * line is one JSON object with each model's tokens/s and the hybrid / Qwen3
 * ratio per length. `--only qwen35` runs the hybrid alone (for `perf record`:
 * bench/perf-control.ts).
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
const LENGTHS = value('lengths', '512,2048').split(',').map(Number);
const stepTokens = Number(value('step', '0')) || Infinity;
const only = value('only', '');
const names: BenchModelName[] = only === 'qwen35' || only === 'qwen3' ? [only] : ['qwen3', 'qwen35'];
const BLOCK_SIZE = 16;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Seconds to prefill `length` tokens from position 0, in steps of at most `stepTokens`. */
async function prefillSeconds(backend: CpuBackend, length: number): Promise<number> {
  const blocks = Array.from({ length: Math.ceil(length / BLOCK_SIZE) }, (_, b) => 1 + b);
  const hybrid = backend.shape.extraPools !== undefined;
  const prompt = Array.from({ length }, (_, i) => 1 + ((i * 7919) % 150000));
  const started = process.hrtime.bigint();
  for (let at = 0; at < length; at += Math.min(stepTokens, length)) {
    const tokens = prompt.slice(at, at + Math.min(stepTokens, length));
    const out = await backend.execute(buildBatch([{ tokens, pastLen: at, blocks, ...(hybrid && { stateSlot: 1 }) }]));
    if (out.logits.length === 0) throw new Error('no logits');
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function main(): Promise<void> {
  const longest = Math.max(...LENGTHS);
  const models: Array<{ name: BenchModelName; backend: CpuBackend; s: Record<number, number[]> }> = [];
  for (const name of names) {
    const backend = await CpuBackend.load(benchModelFolder(name), { threads, quantize: 'q8_0' });
    await backend.allocateCache({
      numBlocks: Math.ceil(longest / BLOCK_SIZE) + 1, blockSize: BLOCK_SIZE, precision: 'f16',
      ...(backend.shape.extraPools && { extraPoolBlocks: { [LINEAR_STATE_POOL]: 2 } }),
    });
    models.push({ name, backend, s: Object.fromEntries(LENGTHS.map((n) => [n, [] as number[]])) });
  }
  for (const m of models) await prefillSeconds(m.backend, Math.min(...LENGTHS)); // warm-up
  perfEnable();
  for (let r = 0; r < runs; r++)
    for (let i = 0; i < models.length; i++) {
      const m = models[(i + r) % models.length]!;
      for (const n of r % 2 === 0 ? LENGTHS : [...LENGTHS].reverse()) m.s[n]!.push(await prefillSeconds(m.backend, n));
    }
  perfDisable();

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const steps = stepTokens === Infinity ? 'the prompt in one step' : `steps of ${stepTokens} tokens`;
  console.log('weft prefill: Qwen3-0.6B shape, pure attention vs hybrid (21 Gated DeltaNet + 7 attention layers), random weights as Q8_0');
  console.log(`CPU: ${cpu} (${cpus().length} logical cores), kernels: ${models[0]!.backend.kernels}, ${threads} threads, ${runs} rounds, ${steps}, load average ${loadavg()[0]?.toFixed(2)}`);
  const result: Record<string, number | string> = { cpu, kernels: String(models[0]!.backend.kernels), threads, loadAverage: Number(loadavg()[0]?.toFixed(2)) };
  const rate: Record<string, Record<number, number>> = {};
  for (const m of models) {
    rate[m.name] = Object.fromEntries(LENGTHS.map((n) => [n, n / median(m.s[n]!)]));
    console.log(`${m.name.padEnd(7)} ${LENGTHS.map((n) => `${n} tokens: ${rate[m.name]![n]!.toFixed(1)} tok/s`).join('   ')}`);
    for (const n of LENGTHS) result[`${m.name}TokPerS${n}`] = Number(rate[m.name]![n]!.toFixed(2));
  }
  if (rate.qwen3 && rate.qwen35)
    for (const n of LENGTHS) {
      const ratio = rate.qwen35[n]! / rate.qwen3[n]!;
      console.log(`hybrid / qwen3 prefill speed at ${n} tokens: ${ratio.toFixed(2)}`);
      result[`ratio${n}`] = Number(ratio.toFixed(3));
    }
  for (const m of models) await m.backend.dispose();
  console.log(JSON.stringify(result));
}

await main();
