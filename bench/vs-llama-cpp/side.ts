/**
 * One side of the benchmark in its own process (so peak RSS is its own):
 *   tsx side.ts --engine weft|llama --model file.gguf --threads N --vocab V [--probe bandwidth-binary]
 * Prints progress on stderr and one JSON line on stdout. With --probe (the
 * compiled bandwidth.c) the memory bandwidth is probed around each one-stream
 * decode measurement, while this side's threads are idle.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measure, measureDecode, type Engine } from './scenarios.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string' }, model: { type: 'string' }, threads: { type: 'string', default: '2' }, vocab: { type: 'string' }, 'max-cells': { type: 'string' }, probe: { type: 'string' },
    'decode-only': { type: 'boolean' },
  },
});
const threads = Number(values.threads);
const vocab = Number(values.vocab);
const file = values.model!;
/** Both sides get the same KV capacity: node-llama-cpp's n_ctx at 64 sequences (256 cells each, its minimum). */
const maxCells = Number(values['max-cells'] ?? 64 * 256);
const log = (line: string) => process.stderr.write(`  [${values.engine}] ${line}\n`);

/** The ggml CPU variant library node-llama-cpp loaded (it picks one per CPU at run time). */
function loadedGgmlCpuVariant(): string {
  const maps = readFileSync('/proc/self/maps', 'utf8');
  const match = /libggml-cpu-([\w-]+)\.so/.exec(maps);
  return match ? match[1]! : 'unknown';
}

async function weftEngine(): Promise<{ engine: Engine; kernels: string; close(): Promise<void> }> {
  const { Pipeline } = await import('../../src/index.js');
  // f16 KV like llama.cpp's default; the cell count node-llama-cpp allocates at 64 sequences.
  const { readGgufFile, ggufModelConfig } = await import('../../src/model-files/gguf/index.js');
  const config = ggufModelConfig(readGgufFile(file));
  const linear = config.linearAttention;
  // A hybrid keeps KV rows in its attention layers only, plus one float32 linear-attention state per running
  // sequence (docs/hybrid.md); prefix caching (and so its checkpoint pool) is off for the measurement.
  const attentionLayers = config.numLayers - (linear?.layers.filter(Boolean).length ?? 0);
  const stateBytes = linear
    ? 4 * linear.layers.filter(Boolean).length *
      ((linear.convKernel - 1) * (2 * linear.numKeyHeads * linear.keyHeadDim + linear.numValueHeads * linear.valueHeadDim) +
        linear.numValueHeads * linear.keyHeadDim * linear.valueHeadDim)
    : 0;
  const kvBytes = maxCells * attentionLayers * config.numKvHeads * config.headDim * 2 * 2 + 64 * stateBytes;
  const started = performance.now();
  const pipe = await Pipeline.create({
    model: file,
    threads,
    kvCache: { size: kvBytes, precision: 'f16' },
    scheduler: { maxNumSeqs: 64, maxNumBatchedTokens: 2048, ...(linear && { prefixCaching: false }) },
  });
  log(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const backend = (pipe as unknown as { backend: { kernels?: string; weightBytes?: { sextets: number } } }).backend;
  // The float matrices' layout is part of which kernels ran (native/src/cpu/kernels/float/sextets.h).
  const sextets = backend.weightBytes?.sextets ?? 0;
  const kernels = `${backend.kernels ?? 'unknown'}${sextets > 0 ? `, 16-bit rows in sextets (${(sextets / 1e9).toFixed(2)} GB)` : ''}`;
  const engine: Engine = {
    prepare: async () => {},
    run: async (prompt, maxTokens) => {
      const result = await pipe.generate(prompt, { maxTokens, temperature: 0, ignoreEos: true });
      if (result.tokenIds.length !== maxTokens) throw new Error(`weft generated ${result.tokenIds.length} of ${maxTokens} tokens`);
    },
  };
  return { engine, kernels, close: () => pipe.close() };
}

/** The part of node-llama-cpp 3.21's API used here. */
interface NlcLlama {
  readonly llamaCppRelease: { release: string };
  readonly systemInfo: string;
  loadModel(options: { modelPath: string }): Promise<NlcModel>;
  dispose(): Promise<void>;
}
interface NlcModel {
  createContext(options: object): Promise<NlcContext>;
  dispose(): Promise<void>;
}
interface NlcContext {
  getSequence(): { evaluate(tokens: number[], options: object): AsyncIterable<number>; dispose(): void };
  dispose(): Promise<void>;
}

async function llamaEngine(): Promise<{ engine: Engine; kernels: string; close(): Promise<void> }> {
  const here = dirname(fileURLToPath(import.meta.url));
  // Imported by path, untyped: node-llama-cpp is installed for this benchmark only (bench/vs-llama-cpp/package.json).
  const { getLlama } = (await import(join(here, 'node_modules', 'node-llama-cpp', 'dist', 'index.js'))) as { getLlama: (options: object) => Promise<NlcLlama> };
  const llama = await getLlama({ build: 'never', gpu: false, maxThreads: threads, logLevel: 'error' });
  const started = performance.now();
  const model = await llama.loadModel({ modelPath: file });
  log(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  let context: NlcContext | undefined;
  const kernels = `ggml-cpu-${loadedGgmlCpuVariant()} (llama.cpp ${llama.llamaCppRelease.release}); ${llama.systemInfo.replace(/\s+/g, ' ').trim()}`;
  const engine: Engine = {
    prepare: async (sequences, tokensPerSequence) => {
      await context?.dispose();
      context = await model.createContext({ sequences, contextSize: Math.max(256, tokensPerSequence), threads: { ideal: threads, min: threads }, batchSize: 512 });
    },
    run: async (prompt, maxTokens) => {
      const sequence = context!.getSequence();
      try {
        let n = 0;
        for await (const _ of sequence.evaluate(prompt, { temperature: 0 })) if (++n >= maxTokens) break;
        if (n !== maxTokens) throw new Error(`node-llama-cpp generated ${n} of ${maxTokens} tokens`);
      } finally {
        sequence.dispose();
      }
    },
  };
  return { engine, kernels, close: async () => { await context?.dispose(); await model.dispose(); await llama.dispose(); } };
}

const side = values.engine === 'weft' ? await weftEngine() : values.engine === 'llama' ? await llamaEngine() : undefined;
if (!side) throw new Error('--engine weft|llama');
const probeBinary = values.probe;
const probe = probeBinary ? () => (JSON.parse(execFileSync(probeBinary, [String(threads)], { encoding: 'utf8' })) as { gbPerSecond: number }).gbPerSecond : undefined;
const measurements = values['decode-only'] ? await measureDecode(side.engine, vocab, log) : await measure(side.engine, vocab, log, probe);
await side.close();
const peakRssBytes = process.resourceUsage().maxRSS * 1024;
log(`peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MiB`);
console.log(JSON.stringify({ engine: values.engine, kernels: side.kernels, ...measurements, peakRssBytes }));
