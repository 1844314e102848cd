/**
 * A 64-stream decode step at Qwen's 151,936-token vocabulary: what handing the
 * logits to JavaScript costs the main thread. Peer, in the same run: the copy
 * path (`copyLogits`: a zero-filled JS array and a memcpy per step, what every
 * step did before, and what Electron still gets). Measured: main-thread CPU
 * time per step (the thread's own schedstat, so the worker threads' forward
 * pass is not in it), of which garbage collection (PerformanceObserver 'gc'),
 * and wall time. The model is a random-weight one, tiny except for the
 * vocabulary, so the LM head's output dominates what a step moves; each step
 * ends with the engine's greedy argmax of every row and the release.
 * Alternating rounds, medians.
 * Run: npx tsx bench/logits-transfer.bench.ts [--rounds N] [--steps N]
 */

import { readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { CpuBackend } from '../src/backends/cpu/cpu-backend.js';
import type { StepBatch } from '../src/backends/backend.js';
import { argmax } from '../src/sampling/sampler.js';
import { writeRandomModel } from '../test/native/random-model.js';

const VOCAB = 151_936;
const STREAMS = 64;
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg('--rounds', 7);
const STEPS = arg('--steps', 30);

/** CPU nanoseconds the main thread has run (Linux: /proc/self/task/<pid>/schedstat). */
function mainThreadNs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
}

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

const model = writeRandomModel(
  {
    architectures: ['Qwen3ForCausalLM'], hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1, num_attention_heads: 2,
    num_key_value_heads: 1, head_dim: 8, vocab_size: VOCAB, max_position_embeddings: 4096, rms_norm_eps: 1e-6, tie_word_embeddings: true,
    rope_parameters: { rope_type: 'default', rope_theta: 1e6 },
  },
  3,
);

/** 64 sequences of one block each, every one decoding its token `step`. */
function decodeBatch(step: number): StepBatch {
  const seq = Int32Array.from({ length: STREAMS + 1 }, (_, i) => i);
  return {
    inputIds: Int32Array.from({ length: STREAMS }, (_, i) => (i * 7919 + step) % VOCAB),
    positions: new Int32Array(STREAMS).fill(step % 16),
    pastLens: new Int32Array(STREAMS).fill(step % 16),
    subsequenceBegins: seq,
    blockIndices: Int32Array.from({ length: STREAMS }, (_, i) => i + 1),
    blockIndicesBegins: seq,
    maxContextLen: (step % 16) + 1,
    logitsIndices: Int32Array.from({ length: STREAMS }, (_, i) => i),
  };
}

interface Round { mainMsPerStep: number; gcMsPerStep: number; wallMsPerStep: number }

async function round(backend: CpuBackend, firstStep: number): Promise<Round> {
  const gc0 = gcMs;
  const cpu0 = mainThreadNs();
  const wall0 = performance.now();
  let checksum = 0;
  for (let s = 0; s < STEPS; s++) {
    const result = await backend.execute(decodeBatch(firstStep + s));
    for (let r = 0; r < STREAMS; r++) checksum += argmax(result.logits, r * VOCAB, (r + 1) * VOCAB);
    backend.release(result);
    await new Promise<void>((resolve) => setImmediate(resolve)); // the engine's turn between steps
  }
  if (checksum < 0) throw new Error('unreachable');
  return {
    mainMsPerStep: (mainThreadNs() - cpu0) / 1e6 / STEPS,
    gcMsPerStep: (gcMs - gc0) / STEPS,
    wallMsPerStep: (performance.now() - wall0) / STEPS,
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const summary = (rs: Round[]) => ({
  main: median(rs.map((r) => r.mainMsPerStep)),
  gc: median(rs.map((r) => r.gcMsPerStep)),
  wall: median(rs.map((r) => r.wallMsPerStep)),
});

const lend = await CpuBackend.load(model.dir, { threads: 2 });
const copy = await CpuBackend.load(model.dir, { threads: 2, copyLogits: true });
try {
  for (const b of [lend, copy]) await b.allocateCache({ numBlocks: STREAMS + 1, blockSize: 16, precision: 'f16' });
  // Argmax alone on the same rows (the part of the main thread's time both share).
  const sample = await lend.execute(decodeBatch(0));
  const a0 = mainThreadNs();
  for (let k = 0; k < 5; k++) for (let r = 0; r < STREAMS; r++) argmax(sample.logits, r * VOCAB, (r + 1) * VOCAB);
  const argmaxMs = (mainThreadNs() - a0) / 1e6 / 5;
  lend.release(sample);
  await round(lend, 0);
  await round(copy, 0);
  const lent: Round[] = [];
  const copied: Round[] = [];
  const loads: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    lent.push(await round(lend, i * STEPS));
    copied.push(await round(copy, i * STEPS));
    loads.push(loadavg()[0]!);
  }
  const l = summary(lent);
  const c = summary(copied);
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'}, kernels ${lend.kernels}, 2 threads; ${STREAMS} streams x ${VOCAB} vocab (${((STREAMS * VOCAB * 4) / 2 ** 20).toFixed(1)} MiB of logits a step)`);
  console.log(`${ROUNDS} alternating rounds of ${STEPS} steps, medians; load average ${median(loads).toFixed(1)}`);
  console.log(`main thread per step: copy ${c.main.toFixed(2)} ms, lent ${l.main.toFixed(2)} ms (${(c.main / l.main).toFixed(2)}x); of which argmax of the 64 rows ~${argmaxMs.toFixed(2)} ms`);
  console.log(`main thread per step without argmax: copy ${(c.main - argmaxMs).toFixed(2)} ms, lent ${(l.main - argmaxMs).toFixed(2)} ms`);
  console.log(`garbage collection per step: copy ${c.gc.toFixed(2)} ms (${((100 * c.gc) / c.main).toFixed(0)}% of the main thread), lent ${l.gc.toFixed(2)} ms (${((100 * l.gc) / l.main).toFixed(0)}%)`);
  console.log(`wall per step: copy ${c.wall.toFixed(2)} ms, lent ${l.wall.toFixed(2)} ms (${(c.wall / l.wall).toFixed(2)}x)`);
  console.log(`logits buffers allocated by the lending model: ${lend.logitsBuffers?.allocated} over ${(ROUNDS + 1) * STEPS + 1} steps`);
  console.log(JSON.stringify({ vocab: VOCAB, streams: STREAMS, copy: c, lent: l, argmaxMs, loadAverage: median(loads) }));
} finally {
  await lend.dispose();
  await copy.dispose();
  rmSync(model.dir, { recursive: true });
}
