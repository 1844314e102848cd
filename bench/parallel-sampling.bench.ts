/**
 * n > 1 sampling (docs/parallel-sampling.md): one request with n = 4 choices
 * against 4 separate requests of the same prompt (seeds seed + i), sent at
 * once to the same pipeline, alternating, --rounds times; medians.
 *
 *   npm run bench:parallel-sampling [-- --threads N --rounds N --n N --prompt TOKENS --tokens N --models demo,qwen06b]
 *
 * For each: wall time, aggregate generated tokens/s, and the tokens the model
 * computed (engine stats, computedTokens): with n the prompt is computed once,
 * checked as computed = prompt + n x (tokens - 1). The separate requests run
 * with the pipeline's defaults (prefix caching on), so a request admitted
 * after another's first prefill chunk already shares its full blocks: the peer
 * is weft without n, not a strawman. Each choice's tokens are checked equal to
 * its separate request's (on a prompt of its own: every timed run has a
 * different prompt, so none is served from another's prefix cache).
 * Models: demo (models/weft-demo, 2.3M: steps are mostly fixed cost) and
 * qwen06b (the Qwen3-0.6B shape with random F16 weights, Q8_0 at load, as
 * bench/speculative.bench.ts writes it: a real-size step).
 *
 * The last line is one JSON object: per model, ratio (n tokens/s over separate
 * tokens/s) and the computed tokens of each.
 */
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CpuBackend } from '../src/backends/cpu/cpu-backend.js';
import { Pipeline } from '../src/index.js';
import { IdTokenizer } from '../test/support/id-tokenizer.js';
import { QWEN3_06B_CONFIG, qwen3_06bSpecs } from './qwen3-0.6b-shape.js';
import { writeRandomF16Model } from './random-f16-model.js';

const args = process.argv.slice(2);
const value = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const threads = Number(value('threads', '2'));
const rounds = Number(value('rounds', '3'));
const N = Number(value('n', '4'));
const PROMPT = Number(value('prompt', '512'));
const TOKENS = Number(value('tokens', '32'));
const MODELS = value('models', 'demo,qwen06b').split(',');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Run {
  readonly ms: number;
  readonly generated: number;
  readonly computed: number;
  readonly forks: number;
  readonly tokenIds: number[][];
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(pipe: Pipeline, work: () => Promise<number[][]>): Promise<Run> {
  const before = pipe.stats();
  const started = performance.now();
  const tokenIds = await work();
  const ms = performance.now() - started;
  const after = pipe.stats();
  return {
    ms,
    generated: tokenIds.reduce((sum, ids) => sum + ids.length, 0),
    computed: (after.computedTokens ?? 0) - (before.computedTokens ?? 0),
    forks: (after.forks ?? 0) - (before.forks ?? 0),
    tokenIds,
  };
}

async function bench(name: string, pipe: Pipeline, prompt: number[]): Promise<Record<string, number>> {
  const options = { temperature: 0.8, maxTokens: TOKENS, ignoreEos: true };
  const parallel = (seed: number, ids = prompt) => measure(pipe, async () => (await pipe.generate(ids, { ...options, seed, n: N })).choices!.map((c) => c.tokenIds));
  const separate = (seed: number, ids = prompt) =>
    measure(pipe, () => Promise.all(Array.from({ length: N }, (_, i) => pipe.generate(ids, { ...options, seed: seed + i }).then((r) => r.tokenIds))));
  // Warm-up, and the check: each choice equals its separate request (the same prompt, seed + i).
  const [checkN, checkSeparate] = [await parallel(1), await separate(1)];
  for (let i = 0; i < N; i++) {
    if (checkN.tokenIds[i]!.join() !== checkSeparate.tokenIds[i]!.join()) throw new Error(`${name}: choice ${i} differs from its separate request (seed ${1 + i})`);
  }
  const a: Run[] = [];
  const b: Run[] = [];
  let start = 0;
  // Each measurement gets a prompt of its own (its first token), so none is served from the prefix cache of another.
  const fresh = (): number[] => [11 + start++, ...prompt.slice(1)];
  for (let r = 0; r < rounds; r++) {
    const seed = 100 * (r + 1);
    const runParallel = async () => a.push(await parallel(seed, fresh()));
    const runSeparate = async () => b.push(await separate(seed, fresh()));
    if (r % 2 === 0) {
      await runParallel();
      await runSeparate();
    } else {
      await runSeparate();
      await runParallel();
    }
    const one = a.at(-1)!;
    if (one.computed !== prompt.length + N * (TOKENS - 1)) throw new Error(`${name}: n = ${N} computed ${one.computed} tokens, expected the prompt once: ${prompt.length} + ${N} x ${TOKENS - 1}`);
  }
  const tps = (runs: Run[]) => median(runs.map((run) => (run.generated * 1000) / run.ms));
  const result = {
    nTokensPerS: tps(a),
    separateTokensPerS: tps(b),
    ratio: tps(a) / tps(b),
    nMs: median(a.map((run) => run.ms)),
    separateMs: median(b.map((run) => run.ms)),
    nComputed: median(a.map((run) => run.computed)),
    separateComputed: median(b.map((run) => run.computed)),
    forks: median(a.map((run) => run.forks)),
  };
  console.log(
    `${name.padEnd(8)} prompt ${prompt.length}, n = ${N}, ${TOKENS} tokens each: n ${result.nTokensPerS.toFixed(1)} tok/s (${result.nMs.toFixed(0)} ms, ${result.nComputed} tokens computed, ${result.forks} forks)` +
      ` | ${N} separate ${result.separateTokensPerS.toFixed(1)} tok/s (${result.separateMs.toFixed(0)} ms, ${result.separateComputed} computed) | ratio ${result.ratio.toFixed(2)}x`,
  );
  return result;
}

async function main(): Promise<void> {
  console.log(`parallel sampling: ${cpus()[0]?.model ?? 'cpu'}, ${threads} threads, rounds ${rounds}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const out: Record<string, Record<string, number>> = {};
  const prompt = (vocab: number) => Array.from({ length: PROMPT }, (_, i) => 10 + ((i * 7919) % (vocab - 20)));
  if (MODELS.includes('demo')) {
    const backend = await CpuBackend.load(join(root, 'models', 'weft-demo'), { threads });
    const pipe = await Pipeline.create({ backend, tokenizer: new IdTokenizer(backend.shape.vocabSize), kvCache: { size: '64MB' } });
    out.demo = await bench('demo', pipe, prompt(backend.shape.vocabSize));
    await pipe.close();
  }
  if (MODELS.includes('qwen06b')) {
    const dir = writeRandomF16Model(join(tmpdir(), 'weft-bench-qwen3-0.6b-f16'), QWEN3_06B_CONFIG, qwen3_06bSpecs());
    const backend = await CpuBackend.load(dir, { threads, quantize: 'q8_0' });
    const pipe = await Pipeline.create({ backend, tokenizer: new IdTokenizer(backend.shape.vocabSize), kvCache: { size: '256MB' } });
    out.qwen06b = await bench('qwen06b', pipe, prompt(backend.shape.vocabSize));
    await pipe.close();
  }
  console.log(JSON.stringify({ n: N, prompt: PROMPT, tokens: TOKENS, threads, load: loadavg()[0], ...out }));
}

await main();
