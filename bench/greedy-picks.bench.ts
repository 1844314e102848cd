/**
 * Greedy decoding with the backend's picks (StepBatch.argmaxRows: the CPU
 * backend takes each greedy row's argmax natively, native/src/cpu/kernels/argmax/argmax.h)
 * against the engine scanning the logits in JavaScript, what every greedy step
 * did before. Peer, in the same run: the same model loaded a second time
 * behind a backend that drops argmaxRows. Measured per generated token, by
 * differences (the same requests generating 65 tokens and 1 take the same
 * prefill): wall time, and the main thread's CPU time (its own schedstat, so
 * the forward pass on the worker threads is not in it). Alternating rounds,
 * medians.
 * Run: npx tsx bench/greedy-picks.bench.ts [--model file.gguf|folder] [--rounds N] [--streams N]
 * (default model: bench/vs-llama-cpp's Q4_K_M file, the Qwen3-0.6B shape at a
 * 151,936-token vocabulary; `npx tsx bench/vs-llama-cpp/make-model.ts --type Q4_K_M` makes it).
 */

import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Backend, StepBatch, StepResult } from '../src/backends/backend.js';
import { CpuBackend } from '../src/backends/cpu/cpu-backend.js';
import { Pipeline } from '../src/create.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: join(import.meta.dirname, 'vs-llama-cpp', '.models', 'qwen3-0.6b-shape-q4_k_m.gguf') },
    rounds: { type: 'string', default: '5' },
    streams: { type: 'string', default: '1' },
  },
});
const model = values.model!;
const ROUNDS = Number(values.rounds);
const STREAMS = Number(values.streams);
const TOKENS = 65;
if (!existsSync(model)) {
  console.error(`${model} is absent: make it with \`npx tsx bench/vs-llama-cpp/make-model.ts --type Q4_K_M\`, or pass --model`);
  process.exit(1);
}

/** The CPU backend without its greedy picks: the engine scans each greedy row itself. */
class ScanningBackend implements Backend {
  constructor(private readonly inner: CpuBackend) {}
  get shape() {
    return this.inner.shape;
  }
  allocateCache(config: Parameters<Backend['allocateCache']>[0]): Promise<void> {
    return this.inner.allocateCache(config);
  }
  execute(batch: StepBatch): Promise<StepResult> {
    const { argmaxRows: _dropped, ...rest } = batch;
    return this.inner.execute(rest);
  }
  release(result: StepResult): void {
    this.inner.release(result);
  }
  dispose(): Promise<void> {
    return this.inner.dispose();
  }
}

/** CPU nanoseconds the main thread has run (Linux: /proc/self/task/<pid>/schedstat). */
function mainThreadNs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
}

const load = (file: string) => (file.endsWith('.gguf') ? CpuBackend.loadGguf(file, { threads: 2 }) : CpuBackend.load(file, { threads: 2 }));
const kvCache = { size: 256 << 20, precision: 'f16' } as const;
const picking = await Pipeline.create({ model, threads: 2, kvCache });
const scanningBackend = await load(model);
const scanning = await Pipeline.create({ backend: new ScanningBackend(scanningBackend), tokenizer: picking.tokenizer, kvCache });

interface Round { wallMs: number; mainMs: number }

/** Per generated token: `STREAMS` requests generating TOKENS tokens, less the same generating 1. */
async function round(pipe: Pipeline, salt: number): Promise<Round> {
  const prompts = Array.from({ length: STREAMS }, (_, s) => Array.from({ length: 16 }, (_, i) => (1000 + 7919 * (salt + s) + 31 * i) % 100_000));
  const timed = async (maxTokens: number) => {
    const cpu = mainThreadNs();
    const wall = performance.now();
    await Promise.all(prompts.map((p) => pipe.generate(p, { maxTokens, temperature: 0, ignoreEos: true })));
    return { wallMs: performance.now() - wall, mainMs: (mainThreadNs() - cpu) / 1e6 };
  };
  const one = await timed(1);
  const many = await timed(TOKENS);
  const tokens = STREAMS * (TOKENS - 1);
  return { wallMs: (many.wallMs - one.wallMs) / tokens, mainMs: (many.mainMs - one.mainMs) / tokens };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  await round(picking, 0);
  await round(scanning, 0);
  const picked: Round[] = [];
  const scanned: Round[] = [];
  const loads: number[] = [];
  for (let i = 1; i <= ROUNDS; i++) {
    // Alternating which goes first, so neither always runs on a machine the other just warmed.
    if (i % 2 === 1) picked.push(await round(picking, i)), scanned.push(await round(scanning, i));
    else scanned.push(await round(scanning, i)), picked.push(await round(picking, i));
    loads.push(loadavg()[0]!);
  }
  const p = { wallMs: median(picked.map((r) => r.wallMs)), mainMs: median(picked.map((r) => r.mainMs)) };
  const s = { wallMs: median(scanned.map((r) => r.wallMs)), mainMs: median(scanned.map((r) => r.mainMs)) };
  const ratios = picked.map((r, i) => scanned[i]!.wallMs / r.wallMs);
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'}, kernels ${scanningBackend.kernels}, 2 threads; ${model}`);
  console.log(`${STREAMS} stream(s), ${TOKENS - 1} tokens each by difference; ${ROUNDS} alternating rounds, medians; load average ${median(loads).toFixed(1)}`);
  console.log(`wall per token: JS scan ${s.wallMs.toFixed(3)} ms, backend picks ${p.wallMs.toFixed(3)} ms (${(s.wallMs / p.wallMs).toFixed(3)}x; per round ${ratios.map((r) => r.toFixed(3)).join(', ')})`);
  console.log(`main thread per token: JS scan ${s.mainMs.toFixed(3)} ms, backend picks ${p.mainMs.toFixed(3)} ms (${(s.mainMs - p.mainMs).toFixed(3)} ms less)`);
  console.log(JSON.stringify({ streams: STREAMS, scan: s, picks: p, wallRatio: s.wallMs / p.wallMs, loadAverage: median(loads) }));
} finally {
  await picking.close();
  await scanning.close();
}
