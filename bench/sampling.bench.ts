/**
 * Sampled decoding against greedy on the same pipeline, in one run (issue #34):
 * the CPU backend runs the sampling chain on its threads (StepBatch.sampling,
 * native/src/cpu/sample/sampler.h). Peer, in the same run: the same model
 * behind a backend that drops `sampling`, so the engine samples each row in
 * JavaScript on the main thread (what every sampled step did before).
 *
 * Each case: STREAMS concurrent generations of TOKENS tokens from 16-token
 * prompts (ignoreEos), aggregate tok/s over the whole run (prefill included),
 * and the main thread's CPU time per generated token (its own schedstat, so the
 * forward pass on the worker threads is not in it). Cases alternate within a
 * round; ROUNDS rounds; medians. A ratio (x over greedy) is the median over the
 * rounds of that round's x / greedy with the same stream count (run next to each
 * other, so a busy host slows both). Then the chain's own cost: one row of
 * 151,936 flat logits (the worst case: every token a candidate) sampled by the
 * native chain (testing.sampleRow, this process's kernel set) and by the JS sampler.
 *
 * node-llama-cpp 3.21.1 on the same GGUF, same prompts, same settings (its
 * names, bench/vs-llama-cpp/sampling-side.ts), in its own process, each of its
 * cases run right after weft's: greedy, sampled and penalties (without
 * logprobs there) at 16 and 1 streams; weft / node-llama-cpp ratios per round,
 * medians. Needs `npm install --prefix bench/vs-llama-cpp`; --skip-llama leaves it out,
 * --llama-threads N gives it N threads (default: --threads).
 *
 * Run: npm run bench:sampling [-- --model file.gguf] [--rounds N] [--tokens N] [--threads N] [--skip-llama]
 * (default model: bench/vs-llama-cpp's Q8_0 file, the Qwen3-0.6B shape with a
 * 151,936-token vocabulary; `npx tsx bench/vs-llama-cpp/make-model.ts --type Q8_0` makes it).
 * Last line: one JSON object with sampledOverGreedy16, sampledOverGreedy1,
 * penaltiesOverGreedy16, ..., and with node-llama-cpp: llama.sampledOverGreedy16 (its own),
 * weftOverLlama.sampled16 (weft's tok/s over its), ... .
 */

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Backend, StepBatch, StepResult } from '../src/backends/backend.js';
import { CpuBackend } from '../src/backends/cpu/cpu-backend.js';
import { SAMPLING_PARAMS } from '../src/backends/backend.js';
import { loadNativeBinding } from '../src/backends/cpu/native-binding.js';
import { GREEDY as GREEDY_PARAMS } from '../src/sampling/params.js';
import { Rng } from '../src/sampling/rng.js';
import { Sampler } from '../src/sampling/sampler.js';
import { Pipeline } from '../src/create.js';
import type { GenerateOptions } from '../src/index.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: join(import.meta.dirname, 'vs-llama-cpp', '.models', 'qwen3-0.6b-shape-q8_0.gguf') },
    rounds: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '32' },
    threads: { type: 'string', default: '2' },
    'skip-llama': { type: 'boolean', default: false },
    'llama-threads': { type: 'string' },
  },
});
const model = values.model!;
const ROUNDS = Number(values.rounds);
const TOKENS = Number(values.tokens);
const THREADS = Number(values.threads);
// node-llama-cpp's threads wait for each other at ggml's spinning barriers, hundreds a token: on a host with
// more runnable threads than cores each wait can last a scheduler slice. --llama-threads 1 shows its sampler without that.
const LLAMA_THREADS = Number(values['llama-threads'] ?? THREADS);
if (!existsSync(model)) {
  console.error(`${model} is absent: make it with \`npx tsx bench/vs-llama-cpp/make-model.ts --type Q8_0\`, or pass --model`);
  process.exit(1);
}

/** The CPU backend without its sampling: the engine samples every row in JavaScript. */
class JsSamplingBackend implements Backend {
  constructor(private readonly inner: CpuBackend) {}
  get shape() {
    return this.inner.shape;
  }
  allocateCache(config: Parameters<Backend['allocateCache']>[0]): Promise<void> {
    return this.inner.allocateCache(config);
  }
  execute(batch: StepBatch): Promise<StepResult> {
    const { sampling: _dropped, ...rest } = batch;
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

const kvCache = { size: 512 << 20, precision: 'f16' } as const;
const nativeBackend = await CpuBackend.loadGguf(model, { threads: THREADS });
const native = await Pipeline.create({ model, threads: 1, kvCache: { size: 8 << 20 } }).then(async (tokenizerSource) => {
  const pipe = await Pipeline.create({ backend: nativeBackend, tokenizer: tokenizerSource.tokenizer, kvCache });
  return { pipe, tokenizerSource };
});
const jsBackend = await CpuBackend.loadGguf(model, { threads: THREADS });
const js = await Pipeline.create({ backend: new JsSamplingBackend(jsBackend), tokenizer: native.tokenizerSource.tokenizer, kvCache });

/** node-llama-cpp in its own process (bench/vs-llama-cpp/sampling-side.ts): one job a line, one answer a line. */
interface LlamaSide {
  kernels: string;
  run(name: string, prompts: number[][], tokens: number, salt: number): Promise<Run>;
  close(): void;
}
async function startLlama(): Promise<LlamaSide | undefined> {
  const dir = join(import.meta.dirname, 'vs-llama-cpp');
  if (values['skip-llama']) return undefined;
  if (!existsSync(join(dir, 'node_modules', 'node-llama-cpp'))) {
    console.error('node-llama-cpp is not installed (npm install --prefix bench/vs-llama-cpp): its comparison is left out');
    return undefined;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'sampling-side.ts'), '--model', model, '--threads', String(LLAMA_THREADS), '--sequences', '16'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done) throw new Error('node-llama-cpp side exited');
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  const ready = await next();
  return {
    kernels: String(ready.kernels),
    run: async (name, prompts, tokens, salt) => {
      child.stdin.write(`${JSON.stringify({ name, prompts, tokens, salt })}\n`);
      return (await next()) as unknown as Run;
    },
    close: () => child.stdin.end(),
  };
}
const llama = await startLlama();

const SAMPLED: GenerateOptions = { temperature: 0.7, topP: 0.9 };
const TOP_K: GenerateOptions = { temperature: 0.7, topK: 40 };
const PENALTIES: GenerateOptions = { temperature: 0.7, topP: 0.9, repetitionPenalty: 1.1, presencePenalty: 0.2, logprobs: 5 };
const GREEDY: GenerateOptions = { temperature: 0 };

interface Case {
  readonly name: string;
  readonly pipe: Pipeline | 'llama';
  readonly options: GenerateOptions;
  readonly streams: number;
}
const CASES: Case[] = [];
for (const streams of [16, 1]) {
  CASES.push({ name: `greedy/${streams}`, pipe: native.pipe, options: GREEDY, streams });
  CASES.push({ name: `sampled/${streams}`, pipe: native.pipe, options: SAMPLED, streams });
  CASES.push({ name: `topK/${streams}`, pipe: native.pipe, options: TOP_K, streams });
  CASES.push({ name: `penalties/${streams}`, pipe: native.pipe, options: PENALTIES, streams });
  CASES.push({ name: `jsSampled/${streams}`, pipe: js, options: SAMPLED, streams });
  if (streams === 16) CASES.push({ name: `jsPenalties/${streams}`, pipe: js, options: PENALTIES, streams });
}
// node-llama-cpp's cases, each next to weft's native case of the same name (after it in odd rounds, before it in even ones).
if (llama)
  for (const kind of ['greedy', 'sampled', 'penalties'])
    for (const streams of [16, 1]) {
      const at = CASES.findIndex((c) => c.name === `${kind}/${streams}`);
      CASES.splice(at + 1, 0, { name: `llama:${kind}/${streams}`, pipe: 'llama', options: {}, streams });
    }

interface Run {
  tokPerS: number;
  mainMsPerToken: number;
}

async function run(c: Case, salt: number): Promise<Run> {
  const prompts = Array.from({ length: c.streams }, (_, s) => Array.from({ length: 16 }, (_, i) => (1000 + 7919 * (salt * 31 + s) + 31 * i) % 100_000));
  if (c.pipe === 'llama') return llama!.run(c.name.slice('llama:'.length), prompts, TOKENS, salt);
  const pipe = c.pipe;
  const cpu = mainThreadNs();
  const wall = performance.now();
  const results = await Promise.all(prompts.map((p, s) => pipe.generate(p, { ...c.options, seed: salt * 100 + s, maxTokens: TOKENS, ignoreEos: true })));
  const ms = performance.now() - wall;
  const tokens = results.reduce((sum, r) => sum + r.tokenIds.length, 0);
  return { tokPerS: (tokens / ms) * 1000, mainMsPerToken: (mainThreadNs() - cpu) / 1e6 / tokens };
}

/** The sampler's row passes this process runs (native/src/cpu/sample/exp_rows.h): avx512 with the avx512vnni set (AMX included). */
const rowPasses = nativeBackend.kernels === 'baseline' ? 'baseline' : /avx512|amx/.test(nativeBackend.kernels ?? '') ? 'avx512' : 'avx2';
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** ms per row of 151,936 flat logits: the native chain (this process's kernel set) and the JS sampler, per setting. */
function rowCosts(): Record<string, { native: number; js: number }> {
  const testing = loadNativeBinding().testing;
  const kernel = rowPasses;
  const rng = new Rng(5);
  const row = Float32Array.from({ length: 151_936 }, () => rng.next() * 4 - 2);
  const prompt = Array.from({ length: 48 }, (_, i) => i * 3001);
  const out: Record<string, { native: number; js: number }> = {};
  for (const [name, options] of [['sampled', SAMPLED], ['topK', TOP_K], ['penalties', PENALTIES]] as const) {
    const params = { ...GREEDY_PARAMS, ...options, seed: 1 } as typeof GREEDY_PARAMS;
    const sampler = new Sampler(params, prompt);
    const p = new Float64Array(SAMPLING_PARAMS);
    sampler.writeParams(p, 0);
    const seen = Int32Array.from(sampler.seenTokens);
    const none = new Int32Array(0);
    const nativeMs: number[] = [];
    const jsMs: number[] = [];
    for (let i = 0; i < 7; i++) {
      let t = performance.now();
      testing.sampleRow(kernel, row, p, seen, none, none);
      nativeMs.push(performance.now() - t);
      const copy = Float32Array.from(row);
      t = performance.now();
      new Sampler(params, prompt).sample(copy, 0, copy.length);
      jsMs.push(performance.now() - t);
    }
    out[name] = { native: median(nativeMs), js: median(jsMs) };
  }
  return out;
}
try {
  for (const c of CASES) await run({ ...c, streams: Math.min(c.streams, 2) }, 0); // warm-up
  const runs = new Map<string, Run[]>(CASES.map((c) => [c.name, []]));
  const loads: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate the order, so no case always runs right after the same other one.
    const order = round % 2 === 1 ? CASES : [...CASES].reverse();
    for (const c of order) {
      const r = await run(c, round);
      runs.get(c.name)!.push(r);
      process.stderr.write(`  round ${round} ${c.name}: ${r.tokPerS.toFixed(1)} tok/s\n`);
    }
    loads.push(loadavg()[0]!);
  }
  const tok = (name: string) => median(runs.get(name)!.map((r) => r.tokPerS));
  const over = (name: string, base: string) => median(runs.get(name)!.map((r, i) => r.tokPerS / runs.get(base)!.at(i)!.tokPerS));
  const main = (name: string) => median(runs.get(name)!.map((r) => r.mainMsPerToken));
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores), kernels ${nativeBackend.kernels} (sampler row passes ${rowPasses}), ${THREADS} threads; ${model}`);
  if (llama) console.log(`node-llama-cpp 3.21.1: ${llama.kernels}, ${LLAMA_THREADS} threads; same prompts and settings, penalties without logprobs`);
  console.log(`${TOKENS} tokens a stream from 16-token prompts, aggregate tok/s (prefill included); ${ROUNDS} alternating rounds, medians; load average ${median(loads).toFixed(1)}`);
  console.log(`sampled = ${JSON.stringify(SAMPLED)}, topK = ${JSON.stringify(TOP_K)}, penalties = ${JSON.stringify(PENALTIES)}; js* = the same, sampled in JavaScript`);
  for (const c of CASES) {
    const perRound = runs.get(c.name)!.map((r) => r.tokPerS.toFixed(1)).join(', ');
    console.log(`  ${c.name.padEnd(15)} ${tok(c.name).toFixed(1).padStart(7)} tok/s   main thread ${main(c.name).toFixed(3)} ms/token   (rounds: ${perRound})`);
  }
  const summary = {
    cpu: cpus()[0]?.model ?? 'unknown',
    kernels: nativeBackend.kernels,
    threads: THREADS,
    sampledOverGreedy16: over('sampled/16', 'greedy/16'),
    sampledOverGreedy1: over('sampled/1', 'greedy/1'),
    penaltiesOverGreedy16: over('penalties/16', 'greedy/16'),
    penaltiesOverGreedy1: over('penalties/1', 'greedy/1'),
    topKOverGreedy16: over('topK/16', 'greedy/16'),
    topKOverGreedy1: over('topK/1', 'greedy/1'),
    jsSampledOverGreedy16: over('jsSampled/16', 'greedy/16'),
    jsSampledOverGreedy1: over('jsSampled/1', 'greedy/1'),
    jsPenaltiesOverGreedy16: over('jsPenalties/16', 'greedy/16'),
    mainMsPerSampledToken16: { native: main('sampled/16'), js: main('jsSampled/16') },
    mainMsPerSampledToken1: { native: main('sampled/1'), js: main('jsSampled/1') },
    ...(llama && {
      llama: {
        kernels: llama.kernels,
        threads: LLAMA_THREADS,
        sampledOverGreedy16: over('llama:sampled/16', 'llama:greedy/16'),
        sampledOverGreedy1: over('llama:sampled/1', 'llama:greedy/1'),
        penaltiesOverGreedy16: over('llama:penalties/16', 'llama:greedy/16'),
        mainMsPerSampledToken16: main('llama:sampled/16'),
        mainMsPerSampledToken1: main('llama:sampled/1'),
      },
      weftOverLlama: Object.fromEntries(
        ['greedy', 'sampled', 'penalties'].flatMap((kind) => [16, 1].map((n) => [`${kind}${n}`, over(`${kind}/${n}`, `llama:${kind}/${n}`)])),
      ),
    }),
    tokPerS: Object.fromEntries(CASES.map((c) => [c.name, tok(c.name)])),
    rowMs: rowCosts(),
    loadAverage: median(loads),
  };
  for (const [name, cost] of Object.entries(summary.rowMs))
    console.log(`  one flat 151,936-token row, ${name}: native ${cost.native.toFixed(2)} ms (one thread, ${rowPasses} row passes), JS ${cost.js.toFixed(2)} ms`);
  console.log(
    `sampled/greedy: 16 streams ${summary.sampledOverGreedy16.toFixed(3)}x, 1 stream ${summary.sampledOverGreedy1.toFixed(3)}x; ` +
      `penalties+logprobs/greedy 16 streams ${summary.penaltiesOverGreedy16.toFixed(3)}x; JS-sampled/greedy 16 streams ${summary.jsSampledOverGreedy16.toFixed(3)}x`,
  );
  if (summary.llama && summary.weftOverLlama)
    console.log(
      `node-llama-cpp sampled/greedy: 16 streams ${summary.llama.sampledOverGreedy16.toFixed(3)}x, 1 stream ${summary.llama.sampledOverGreedy1.toFixed(3)}x; ` +
        `weft/node-llama-cpp: ${Object.entries(summary.weftOverLlama).map(([k, v]) => `${k} ${v.toFixed(2)}x`).join(', ')}`,
    );
  console.log(JSON.stringify(summary));
} finally {
  llama?.close();
  await native.pipe.close();
  await native.tokenizerSource.close();
  await js.close();
}
