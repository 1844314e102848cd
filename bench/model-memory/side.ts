/**
 * One load of a GGUF in its own process (so RSS is its own), for
 * bench/model-memory/run.ts: `--mode mmap|read`. Loads, allocates the KV
 * cache, runs a 64-token prefill and 16 decode steps of one sequence, and
 * prints one JSON line: load and first-step times, RSS after load, after the
 * cache, peak RSS, and the weight bytes copied / mapped.
 */
import { parseArgs } from 'node:util';
import { CpuBackend } from '../../src/backends/cpu/cpu-backend.js';
import type { StepBatch } from '../../src/backends/backend.js';

const { values } = parseArgs({ options: { mode: { type: 'string' }, file: { type: 'string' }, threads: { type: 'string', default: '2' }, 'kv-mib': { type: 'string', default: '1024' } } });
const mmap = values.mode === 'mmap';
const rss = () => process.memoryUsage().rss;

const start = performance.now();
const backend = await CpuBackend.loadGguf(values.file!, { threads: Number(values.threads), mmap });
const loadMs = performance.now() - start;
const rssAfterLoad = rss();
const { numLayers, numKvHeads, headDim } = backend.shape;
const blockSize = 16;
const blockBytes = 2 * numLayers * numKvHeads * blockSize * headDim * 2; // f16
const numBlocks = Math.floor((Number(values['kv-mib']) * 2 ** 20) / blockBytes);
const c0 = performance.now();
await backend.allocateCache({ numBlocks, blockSize, precision: 'f16' });
const cacheMs = performance.now() - c0;
const rssAfterCache = rss();

const step = (tokens: number[], pastLen: number): StepBatch => ({
  inputIds: Int32Array.from(tokens),
  positions: Int32Array.from(tokens, (_, i) => pastLen + i),
  pastLens: Int32Array.of(pastLen),
  subsequenceBegins: Int32Array.of(0, tokens.length),
  blockIndices: Int32Array.from({ length: Math.ceil((pastLen + tokens.length) / blockSize) }, (_, i) => i + 1),
  blockIndicesBegins: Int32Array.of(0, Math.ceil((pastLen + tokens.length) / blockSize)),
  maxContextLen: pastLen + tokens.length,
  logitsIndices: Int32Array.of(tokens.length - 1),
});
const f0 = performance.now();
let result = await backend.execute(step(Array.from({ length: 64 }, (_, i) => (i * 4099) % backend.shape.vocabSize), 0));
const firstStepMs = performance.now() - f0;
backend.release(result);
const d0 = performance.now();
for (let t = 0; t < 16; t++) {
  result = await backend.execute(step([(t * 31) % backend.shape.vocabSize], 64 + t));
  backend.release(result);
}
const decodeMsPerToken = (performance.now() - d0) / 16;
const weightBytes = backend.weightBytes!;
const cacheBytes = numBlocks * blockBytes;
const kernels = backend.kernels ?? 'unknown';
await backend.dispose();
console.log(JSON.stringify({
  mode: values.mode, loadMs, cacheMs, firstStepMs, decodeMsPerToken, rssAfterLoad, rssAfterCache,
  peakRss: process.resourceUsage().maxRSS * 1024, weightBytes, cacheBytes, kernels,
}));
