/**
 * Engine overhead per step: scheduling, KV bookkeeping, batch building,
 * greedy sampling and output handling, with N requests decoding at once.
 * The backend returns ready-made logits, so what is timed is weft's own work.
 *
 *   npm run bench:engine
 *
 * Each size runs several rounds, each with a fresh engine: 20 decode steps to
 * warm up, then the timed steps. The figure is the median over every timed step
 * of every round (the spread of the rounds' own medians is printed too, since
 * other processes on the machine move single rounds a lot). The 1-minute load
 * average is printed with the results: compare figures taken at similar loads.
 *
 * Last line: one JSON object; its "seqs": 256 entry is the headline figure
 * (target: under 100 µs per step on a 2-core machine).
 */

import { availableParallelism, loadavg } from 'node:os';

import type { Backend, CacheConfig, ModelShape, StepBatch, StepResult } from '../src/backends/backend.js';
import { Engine, type StepInfo } from '../src/engine/engine.js';
import { KvCacheManager } from '../src/engine/kv/kv-cache-manager.js';
import { GREEDY } from '../src/sampling/params.js';

const VOCAB = 256;

class ReadyLogitsBackend implements Backend {
  readonly shape: ModelShape = { vocabSize: VOCAB, numLayers: 1, numKvHeads: 1, headDim: 1, maxContextLength: 1 << 20 };
  private logits = new Float32Array(0);
  backendNs = 0n;
  allocateCache(_config: CacheConfig): void {}
  async execute(batch: StepBatch): Promise<StepResult> {
    const started = process.hrtime.bigint();
    const needed = batch.logitsIndices.length * VOCAB;
    if (this.logits.length !== needed) {
      // Each row peaks at a token derived from its row, so detokenization sees varied text.
      this.logits = new Float32Array(needed);
      for (let row = 0; row < batch.logitsIndices.length; row++) this.logits[row * VOCAB + 97 + (row % 26)] = 1;
    }
    this.backendNs += process.hrtime.bigint() - started;
    return { logits: this.logits };
  }
  dispose(): void {}
}

interface Round {
  /** Wall-clock µs of each timed step. */
  readonly durations: number[];
  /** Process CPU µs (all threads, GC included) from the end of the last warm-up step to the end of the last timed one. */
  readonly cpuUs: number;
}

/** One round: a fresh engine with `seqs` requests decoding. */
async function measureRound(seqs: number, steps: number): Promise<Round> {
  const backend = new ReadyLogitsBackend();
  const blockSize = 16;
  const kv = new KvCacheManager([{ name: 'attention', blockSize, numBlocks: seqs * 64 + 1 }], { prefixCaching: true });
  const durations: number[] = [];
  let decodeSteps = 0;
  let cpuStart = process.cpuUsage();
  let cpuUs = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const engine = new Engine({
    backend,
    kv,
    scheduler: { maxNumSeqs: seqs, maxNumBatchedTokens: Math.max(8192, seqs * 17), policy: 'fcfs' },
    decoder: { decode: (ids) => String.fromCharCode(...ids) },
    eosTokenIds: [0],
    observer: {
      onStep: (info: StepInfo) => {
        if (info.scheduledTokens !== seqs) return; // still prefilling
        decodeSteps++;
        if (decodeSteps === 20) cpuStart = process.cpuUsage();
        if (decodeSteps > 20) durations.push(info.durationMs * 1000);
        if (durations.length === steps && cpuUs === 0) {
          const cpu = process.cpuUsage(cpuStart);
          cpuUs = cpu.user + cpu.system;
          resolveDone();
        }
      },
    },
  });
  const sink = { onDelta: () => {}, onFinish: () => {} };
  for (let i = 0; i < seqs; i++) {
    const prompt = Array.from({ length: 16 }, (_, j) => 97 + ((i * 7 + j) % 26));
    engine.add(
      { promptTokenIds: prompt, sampling: GREEDY, stop: { maxTokens: 1 << 20, stopTokenIds: [], stopStrings: [], ignoreEos: true }, priority: 0 },
      sink,
    );
  }
  await done;
  engine.close(new Error('benchmark over'));
  await engine.whenIdle();
  return { durations, cpuUs };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

const round1 = (value: number): number => Math.round(value * 10) / 10;

interface SizeResult {
  seqs: number;
  usPerStep: number;
  p90: number;
  rounds: number;
  roundMedians: [number, number];
  /** Mean process CPU time per step cycle (the step, the loop's turn between steps, GC): less moved by other processes than wall time. */
  cpuUsPerStep: number;
}

async function measure(seqs: number, steps: number, rounds: number): Promise<SizeResult> {
  const all: number[] = [];
  const medians: number[] = [];
  let cpuUs = 0;
  for (let round = 0; round < rounds; round++) {
    const { durations, cpuUs: roundCpuUs } = await measureRound(seqs, steps);
    cpuUs += roundCpuUs;
    all.push(...durations);
    medians.push(quantile([...durations].sort((a, b) => a - b), 0.5));
  }
  all.sort((a, b) => a - b);
  medians.sort((a, b) => a - b);
  return {
    seqs,
    usPerStep: round1(quantile(all, 0.5)),
    p90: round1(quantile(all, 0.9)),
    rounds,
    roundMedians: [round1(medians[0]!), round1(medians[medians.length - 1]!)],
    cpuUsPerStep: round1(cpuUs / (rounds * steps)),
  };
}

const loadBefore = loadavg()[0]!;
const results: SizeResult[] = [];
for (const seqs of [1, 16, 64, 256, 1024]) {
  const result = await measure(seqs, seqs >= 1024 ? 100 : 300, seqs >= 1024 ? 3 : 5);
  results.push(result);
  console.log(
    `${String(seqs).padStart(5)} running requests: ${result.usPerStep.toFixed(1).padStart(8)} µs/step median, ` +
      `${result.p90.toFixed(1)} p90, ${(result.usPerStep / seqs).toFixed(2)} µs per request ` +
      `(${result.rounds} rounds, their medians ${result.roundMedians[0]}-${result.roundMedians[1]}; ` +
      `process CPU ${result.cpuUsPerStep} µs per step cycle)`,
  );
}
const loadAverage = round1((loadBefore + loadavg()[0]!) / 2);
const headline = results.find((r) => r.seqs === 256)!;
console.log(`load average (1 min) while measuring: ~${loadAverage} on ${availableParallelism()} cores`);
console.log(`target: under 100 µs per step at 256 requests; measured ${headline.usPerStep} µs (${(headline.usPerStep / 100).toFixed(2)}x of budget)`);
console.log(JSON.stringify({ seqs: 256, usPerStep: headline.usPerStep, loadAverage, all: results }));
