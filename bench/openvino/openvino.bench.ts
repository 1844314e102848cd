/**
 * weft on OpenVINO vs openvino.genai's ContinuousBatchingPipeline (the core
 * OpenVINO Model Server runs), on the same IR, same machine, same workload.
 *
 *   pip install openvino==2026.4.1 openvino-genai==2026.4.1.0 && npm run build:openvino
 *   npx tsx bench/openvino/openvino.bench.ts [--model models/weft-demo-openvino/f32] [--runs 3]
 *   npx tsx bench/openvino/openvino.bench.ts --model /tmp/qwen3-0.6b-int8 --build-ir --weights int8 \
 *       --kv u8 --inference default --streams 1,16 --no-scenario        # issue #33's real-size run
 *
 * --build-ir: when --model has no openvino_model.xml, make it first with the recipe
 * (tools/openvino/make_ir.py --random qwen3-0.6b --weights W: Qwen3-0.6B's shape, random
 * weights; a few minutes and about 0.6 GB for int8).
 * --kv f32|f16|u8 (default f32) and --inference f32|f16|bf16|default (default f32;
 * "default": the plugin's own, bf16 on CPUs with AMX / AVX512-BF16): one set of compile
 * properties, weft's compileProperties() for them, handed as they are to both sides and
 * printed. --streams: the concurrencies (default 1,16,64). --no-scenario: skip part 2.
 *
 * Both sides: CPU plugin, INFERENCE_NUM_THREADS=2, those properties, greedy, ignore EOS,
 * prefix caching off, max_num_batched_tokens 256, the same prompt token ids, the same
 * number of cache blocks. The two runners alternate (weft, genai, weft, ...) and each
 * figure is the median of the runs. genai runs in a Python child process
 * (bench/openvino/genai_runner.py); its timer starts after its pipeline is built, as weft's does.
 *
 * 1. Throughput (generated tokens / wall second, all requests) and median time to
 *    first token per concurrency; ratios weft / genai.
 * 2. The seed's failure scenario: 16 long generations over a cache that fits about
 *    two, max_num_seqs 16, then a cache too small for even one whole request.
 *    What each side does is printed: finished or not, outputs equal to an
 *    unpressured run or not, errors.
 * Last line: one JSON object with every figure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenVinoBackend, Pipeline, type InferencePrecision, type OpenVinoBackendOptions } from '../../src/index.js';
import { compileProperties } from '../../src/backends/openvino/index.js';
import type { KvPrecision } from '../../src/backends/backend.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const flag = (name: string) => args.includes(`--${name}`);
const MODEL = resolve(arg('model', join(here, '..', '..', 'models', 'weft-demo-openvino', 'f32')));
const RUNS = Number(arg('runs', '3'));
const THREADS = 2;
const KV = arg('kv', 'f32') as KvPrecision;
const INFERENCE = arg('inference', 'f32');
const STREAMS = arg('streams', '1,16,64').split(',').map(Number);
const PYTHON = process.env.WEFT_PYTHON ?? 'python3';
if (!['f32', 'f16', 'u8'].includes(KV)) throw new Error(`--kv ${KV}: expected f32, f16 or u8`);
if (!['f32', 'f16', 'bf16', 'default'].includes(INFERENCE)) throw new Error(`--inference ${INFERENCE}: expected f32, f16, bf16 or default`);
if (STREAMS.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--streams ${arg('streams', '')}: expected a comma-separated list of positive integers`);
/** weft's options for the chosen settings; PROPERTIES is what they compile with, handed to genai unchanged. */
const BACKEND_OPTIONS: OpenVinoBackendOptions = {
  kvPrecision: KV,
  threads: THREADS,
  ...(INFERENCE !== 'default' && { inferencePrecision: INFERENCE as InferencePrecision }),
};
const PROPERTIES = compileProperties('CPU', BACKEND_OPTIONS);

/** --build-ir: the recipe's real-shape IR with random weights, when --model has none yet. */
function buildIrIfAsked(): void {
  if (existsSync(join(MODEL, 'openvino_model.xml'))) return;
  if (!flag('build-ir')) throw new Error(`${MODEL} has no openvino_model.xml; pass --build-ir to make a Qwen3-0.6B-shape IR there`);
  const weights = arg('weights', 'int8');
  console.log(`building ${weights} IR of the Qwen3-0.6B shape (random weights) in ${MODEL} ...`);
  const recipe = join(here, '..', '..', 'tools', 'openvino', 'make_ir.py');
  const run = spawnSync(PYTHON, [recipe, '--random', 'qwen3-0.6b', '--weights', weights, '--out', MODEL], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`make_ir.py exited with ${run.status}`);
}

interface RunResult {
  tokens: number;
  seconds: number;
  ttft: number[];
  outputs: number[][];
  error?: string;
  statuses?: string[];
  finishReasons?: string[];
}

/** Deterministic prompt ids (no tokenizer involved): `count` prompts of `length` tokens. */
function makePrompts(count: number, length: number, vocab: number): number[][] {
  return Array.from({ length: count }, (_, i) => Array.from({ length }, (_, j) => 10 + ((i * 7919 + j * 104729) % (vocab - 20))));
}

/** Cache blocks for a workload, the same on both sides: room for every request twice over (no preemption). */
let BLOCK_TOKENS = 32;
const blocksFor = (prompts: number[][], maxTokens: number) => Math.max(64, 2 * prompts.length * Math.ceil((prompts[0]!.length + maxTokens) / BLOCK_TOKENS));

/**
 * One weft run. `ids` false (the timed throughput runs): stream(), time to first token at the first
 * part, tokens from usage. Token ids come out of stream() only with logprobs, and asking for them
 * costs a log-softmax per token that genai's side does not pay, so `ids` true runs generate() for
 * the ids instead (no TTFT).
 */
async function runWeft(prompts: number[][], maxTokens: number, blocks: number | undefined, maxNumSeqs: number, ids = false): Promise<RunResult> {
  const probe = await OpenVinoBackend.load(MODEL, BACKEND_OPTIONS);
  const bytesPerBlock = probe.shape.kvBlockBytes!;
  await probe.dispose();
  const size = (blocks ?? blocksFor(prompts, maxTokens)) * bytesPerBlock; // planPools adds weft's null block on top
  const pipe = await Pipeline.create({
    model: MODEL,
    device: 'openvino:CPU',
    threads: THREADS,
    ...(BACKEND_OPTIONS.inferencePrecision !== undefined && { openvino: { inferencePrecision: BACKEND_OPTIONS.inferencePrecision } }),
    kvCache: { size, precision: KV },
    scheduler: { maxNumSeqs, maxNumBatchedTokens: 256, prefixCaching: false },
  });
  const start = performance.now();
  const ttft: number[] = [];
  const finishReasons: string[] = [];
  try {
    const request = { maxTokens, temperature: 0, ignoreEos: true };
    const counts: number[] = [];
    const outputs = await Promise.all(
      prompts.map(async (prompt, i) => {
        if (ids) {
          const result = await pipe.generate(prompt, request);
          finishReasons[i] = result.finishReason;
          counts[i] = result.tokenIds.length;
          return result.tokenIds;
        }
        for await (const part of pipe.stream(prompt, request)) {
          ttft[i] ??= (performance.now() - start) / 1000;
          if (part.type === 'finish') {
            finishReasons[i] = part.finishReason;
            counts[i] = part.usage.completionTokens;
          }
        }
        return [];
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    return { tokens: counts.reduce((n, c) => n + c, 0), seconds, ttft, outputs, finishReasons };
  } catch (error) {
    return { tokens: 0, seconds: 0, ttft, outputs: [], error: String(error) };
  } finally {
    await pipe.close();
  }
}

function runGenai(prompts: number[][], maxTokens: number, blocks: number | undefined, maxNumSeqs: number): RunResult {
  const job = { model: MODEL, prompts, max_tokens: maxTokens, num_kv_blocks: blocks ?? blocksFor(prompts, maxTokens), max_num_seqs: maxNumSeqs, max_num_batched_tokens: 256, properties: PROPERTIES };
  const run = spawnSync(PYTHON, [join(here, 'genai_runner.py')], { input: JSON.stringify(job), encoding: 'utf8', timeout: 600_000, maxBuffer: 1 << 28 });
  if (run.status !== 0) {
    return { tokens: 0, seconds: 0, ttft: [], outputs: [], error: `exit ${run.status} signal ${run.signal}: ${run.stderr.slice(-400)}` };
  }
  const out = JSON.parse(run.stdout.trim().split('\n').pop()!) as { tokens: number; seconds: number; ttft: number[]; outputs: number[][]; statuses: string[] };
  return { ...out };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number, d = 1) => x.toFixed(d);

async function main(): Promise<void> {
  buildIrIfAsked();
  const genaiVersion = spawnSync(PYTHON, ['-c', 'import openvino_genai as g; print(g.__version__)'], { encoding: 'utf8' }).stdout.trim();
  const probe = await OpenVinoBackend.load(MODEL, BACKEND_OPTIONS);
  const { vocabSize, kvBlockSize } = probe.shape;
  BLOCK_TOKENS = kvBlockSize!;
  const ovVersion = probe.openvinoVersion;
  const cache = probe.cacheInputs.filter((p) => p.name.endsWith('_cache.0')).map((p) => `${p.name} ${p.type} [${p.shape.join(', ')}]`);
  await probe.dispose();
  console.log(`model ${MODEL}`);
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} logical), ${THREADS} threads; OpenVINO ${ovVersion}; openvino.genai ${genaiVersion}`);
  console.log(`compile properties, both sides: ${JSON.stringify(PROPERTIES)} (inference precision: ${PROPERTIES.INFERENCE_PRECISION_HINT ?? "the plugin's default"})`);
  console.log(`kernels: OpenVINO CPU plugin PagedAttention, ${KV} KV cache (${cache.join(', ')}), block ${kvBlockSize} tokens; ${RUNS} alternating runs, medians; load average ${loadavg()[0]!.toFixed(1)} at the start\n`);
  const report: Record<string, unknown> = { model: MODEL, openvino: ovVersion, genai: genaiVersion, cpu: cpus()[0]?.model, threads: THREADS, properties: PROPERTIES };

  const throughput: unknown[] = [];
  console.log('requests | weft tok/s | genai tok/s | ratio | weft TTFT ms | genai TTFT ms | ratio | same ids');
  for (const concurrency of STREAMS) {
    const prompts = makePrompts(concurrency, 32, vocabSize);
    const maxTokens = 64;
    const weft: RunResult[] = [];
    const genai: RunResult[] = [];
    for (let r = 0; r < RUNS; r++) {
      weft.push(await runWeft(prompts, maxTokens, undefined, 64));
      genai.push(runGenai(prompts, maxTokens, undefined, 64));
      console.log(`  run ${r + 1}: weft ${fmt(weft.at(-1)!.tokens / weft.at(-1)!.seconds)} tok/s, genai ${fmt(genai.at(-1)!.tokens / genai.at(-1)!.seconds)} tok/s (load ${loadavg()[0]!.toFixed(1)})`);
    }
    const failed = [...weft, ...genai].find((r) => r.error);
    if (failed) throw new Error(`a run failed: ${failed.error}`);
    const wTps = median(weft.map((r) => r.tokens / r.seconds));
    const gTps = median(genai.map((r) => r.tokens / r.seconds));
    const wTtft = median(weft.map((r) => median(r.ttft))) * 1000;
    const gTtft = median(genai.map((r) => median(r.ttft))) * 1000;
    const weftIds = await runWeft(prompts, maxTokens, undefined, 64, true);
    const same = JSON.stringify(weftIds.outputs) === JSON.stringify(genai[0]!.outputs);
    console.log(`${String(concurrency).padStart(8)} | ${fmt(wTps).padStart(10)} | ${fmt(gTps).padStart(11)} | ${fmt(wTps / gTps, 2)}x | ${fmt(wTtft).padStart(12)} | ${fmt(gTtft).padStart(13)} | ${fmt(wTtft / gTtft, 2)}x | ${same}`);
    throughput.push({ concurrency, weftTokensPerSecond: wTps, genaiTokensPerSecond: gTps, ratio: wTps / gTps, weftTtftMs: wTtft, genaiTtftMs: gTtft, sameIds: same });
  }
  report.throughput = throughput;
  if (flag('no-scenario')) {
    report.loadAverage = loadavg();
    console.log(`\n1-minute load average at the end: ${loadavg()[0]!.toFixed(1)}\n\n${JSON.stringify(report)}`);
    return;
  }

  // The seed's failure scenario: 16 long generations, a cache that fits about two.
  const prompts = makePrompts(16, 32, vocabSize);
  const maxTokens = 480;
  const perRequestBlocks = Math.ceil((32 + maxTokens) / kvBlockSize!);
  const reference = await runWeft(prompts, maxTokens, undefined, 16, true);
  const scenarios: unknown[] = [];
  for (const [label, blocks] of [
    ['cache for ~2 requests', 2 * perRequestBlocks + 2],
    ['cache smaller than 1 request', Math.floor(perRequestBlocks * 0.75)],
  ] as const) {
    const w = await runWeft(prompts, maxTokens, blocks, 16, true);
    const g = runGenai(prompts, maxTokens, blocks, 16);
    const describe = (r: RunResult, name: string) => {
      if (r.error) return `${name}: ERROR ${r.error}`;
      const equal = r.outputs.filter((o, i) => JSON.stringify(o) === JSON.stringify(reference.outputs[i])).length;
      const lengths = r.outputs.map((o) => o.length);
      const endings = r.statuses ?? r.finishReasons ?? [];
      return `${name}: ${r.tokens} tokens in ${fmt(r.seconds, 2)} s, ${equal}/16 outputs equal to the unpressured run, lengths [${lengths.join(' ')}], endings {${[...new Set(endings)].join(', ')}}`;
    };
    console.log(`\n${label} (${blocks} blocks of ${kvBlockSize} tokens, ${perRequestBlocks} per request), 16 requests, max_num_seqs 16:`);
    console.log(`  ${describe(w, 'weft ')}`);
    console.log(`  ${describe(g, 'genai')}`);
    scenarios.push({ label, blocks, weft: describe(w, 'weft'), genai: describe(g, 'genai') });
  }
  report.failureScenario = scenarios;
  report.loadAverage = loadavg();
  console.log(`\n1-minute load average at the end: ${loadavg()[0]!.toFixed(1)} (other processes share these cores: compare runs at similar loads)`);
  console.log(`\n${JSON.stringify(report)}`);
}

await main();
