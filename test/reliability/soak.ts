/**
 * The seed's workload as a soak: the deployment that killed OVMS, run against
 * weft's real CPU backend and demo model.
 *
 * 16 long generations in flight at all times over a KV cache that fits about
 * two, maxNumSeqs 16, chunked prefill, prefix caching (prompts share
 * prefixes), arrivals throughout. Of every ten requests about one is aborted
 * through its AbortSignal at a random moment and one is abandoned mid-stream
 * (the consumer breaks out of the loop). Greedy decoding, so every request
 * that runs to its end must produce exactly the text it produces alone.
 *
 * runSoak() returns one summary; `npm run soak -- --requests 10000` prints it
 * as one JSON line, and test/reliability/soak.test.ts runs a short version.
 * `--hybrid` runs it on the hybrid fixture (test/fixtures/qwen35-tiny, Gated
 * DeltaNet + attention: two cache pools), the model family OVMS ran; its
 * prompts are token ids (the fixture has no tokenizer), and prefix hits
 * resume from state checkpoints every 32 tokens (docs/hybrid.md).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { AbortError, Pipeline } from '../../src/index.js';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { LINEAR_STATE_POOL } from '../../src/backends/cpu/cpu-backend.js';
import { IdTokenizer } from '../support/id-tokenizer.js';
import { readReference } from '../native/helpers.js';

export interface SoakOptions {
  /** Requests to run in all. */
  readonly requests: number;
  /** Requests in flight at once. */
  readonly concurrency?: number;
  /** Tokens each request generates when it runs to the end. */
  readonly maxTokens?: number;
  readonly seed?: number;
  /** Stop starting new requests after this long (the ones in flight still end). */
  readonly timeLimitMs?: number;
  /** A model folder with a tokenizer (default: the demo model). */
  readonly model?: string;
  /** Run on the hybrid fixture instead (see above). */
  readonly hybrid?: boolean;
}

export interface SoakSummary {
  readonly requests: number;
  readonly completed: number;
  readonly aborted: number;
  readonly abandoned: number;
  /** Requests that failed with anything but the AbortError they asked for, or a process-level error. */
  readonly crashes: number;
  /** KV blocks still in use (any pool) once the pipeline is idle. */
  readonly leakedBlocks: number;
  /** Outputs that differ from the same request run alone (a prefix of it, for abandoned ones). */
  readonly mismatches: number;
  readonly preemptions: number;
  /** Prompt tokens served from the prefix cache, over all requests that finished. */
  readonly cachedPromptTokens: number;
  /** Requests the pipeline started but never counted as finished, at idle. */
  readonly unsettled: number;
  /** Heap after a full GC at the end minus after the warm-up, in MB. */
  readonly heapGrowthMB: number;
  readonly seconds: number;
  /** The first few unexpected errors, when there were any. */
  readonly errors?: readonly string[];
}

const DEMO_MODEL = fileURLToPath(new URL('../../models/weft-demo', import.meta.url));
/** The demo model's K+V bytes per token at f32: 2 x 5 layers x 2 heads x 48 x 4 B. */
const DEMO_KV_BYTES_PER_TOKEN = 3840;
const HYBRID_FIXTURE = fileURLToPath(new URL('../fixtures/qwen35-tiny', import.meta.url));
/** The hybrid fixture's attention K+V bytes per token at f32: 2 x 2 attention layers x 2 heads x 16 x 4 B. */
const HYBRID_KV_BYTES_PER_TOKEN = 512;

type Prompt = string | readonly number[];

/** What the soak runs on: its prompts, and pipelines over that model. */
interface SoakModel {
  readonly prompts: readonly Prompt[];
  /** A pipeline with room to spare, for the solo runs. */
  alone(): Promise<Pipeline>;
  /** The soak's pipeline: a cache that fits about two requests of `maxTokens`, maxNumSeqs 16. */
  pressured(maxTokens: number): Promise<Pipeline>;
}

const SCHEDULER = { maxNumSeqs: 16, maxNumBatchedTokens: 64, prefixCaching: true };

function demoModel(model: string): SoakModel {
  const promptTokens = 40; // the prompts' length in tokens, rounded up
  return {
    prompts: soakPrompts(),
    alone: () => Pipeline.create({ model, threads: 1, kvCache: { size: '16MB' } }),
    pressured: (maxTokens) =>
      Pipeline.create({
        model,
        threads: 1,
        kvCache: { size: 2 * (promptTokens + maxTokens) * DEMO_KV_BYTES_PER_TOKEN, precision: 'f32', blockSize: 16 },
        scheduler: SCHEDULER,
      }),
  };
}

/** The hybrid fixture: prompts are stretches of its reference prompts, 9 to 72 tokens. */
function hybridModel(): SoakModel {
  const reference = readReference(HYBRID_FIXTURE) as unknown as { cases: Array<{ prompt_ids: number[] }> };
  const source = reference.cases.at(-1)!.prompt_ids;
  const prompts = Array.from({ length: 12 }, (_, i) => source.slice(i * 19, i * 19 + 9 + ((i * 7) % 64)));
  const longestPrompt = Math.max(...prompts.map((p) => p.length));
  const open = async (kvBytes: (stateBytes: number) => number): Promise<Pipeline> => {
    const backend = await CpuBackend.load(HYBRID_FIXTURE, { threads: 1 });
    const stateBytes = backend.shape.extraPools!.find((p) => p.name === LINEAR_STATE_POOL)!.bytesPerBlock;
    return Pipeline.create({
      backend,
      tokenizer: new IdTokenizer(backend.shape.vocabSize),
      // A checkpoint every 32 tokens, so repeated prompts resume from them.
      kvCache: { size: kvBytes(stateBytes), precision: 'f32', blockSize: 16, checkpointInterval: 32 },
      scheduler: SCHEDULER,
    });
  };
  return {
    prompts,
    alone: () => open((state) => 16 * state + 2 ** 20),
    // One state slot per running request (16), and attention KV (with its checkpoints) for about two requests.
    pressured: (maxTokens) => open((state) => 16 * state + 2 * (longestPrompt + maxTokens) * (HYBRID_KV_BYTES_PER_TOKEN + state / 32)),
  };
}

type Plan = 'finish' | 'abort' | 'abandon';

export async function runSoak(options: SoakOptions): Promise<SoakSummary> {
  const concurrency = options.concurrency ?? 16;
  const maxTokens = options.maxTokens ?? 160;
  const model = options.hybrid ? hybridModel() : demoModel(options.model ?? DEMO_MODEL);
  const random = seeded(options.seed ?? 1);
  const prompts = model.prompts;
  const started = performance.now();

  // What each prompt generates alone, on a pipeline with room to spare.
  const solo = new Map<Prompt, number[]>();
  {
    await using alone = await model.alone();
    for (const prompt of prompts) solo.set(prompt, (await alone.generate(prompt, greedy(maxTokens))).tokenIds);
  }

  const pipe = await model.pressured(maxTokens);
  const processErrors: unknown[] = [];
  const onProcessError = (error: unknown): void => {
    processErrors.push(error);
  };
  process.on('unhandledRejection', onProcessError);
  process.on('uncaughtException', onProcessError);

  const tally = { completed: 0, aborted: 0, abandoned: 0, crashes: 0, mismatches: 0, cachedPromptTokens: 0 };
  const firstErrors: string[] = [];
  const crash = (error: unknown): void => {
    tally.crashes++;
    if (firstErrors.length < 5) firstErrors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  };
  let heapAfterWarmup: number | undefined;
  let next = 0;
  const oneRequest = async (): Promise<void> => {
    const prompt = prompts[Math.floor(random() * prompts.length)]!;
    const roll = random();
    const plan: Plan = roll < 0.1 ? 'abort' : roll < 0.2 ? 'abandon' : 'finish';
    const stopAt = 1 + Math.floor(random() * maxTokens);
    const expected = solo.get(prompt)!;
    const controller = new AbortController();
    const ids: number[] = [];
    try {
      for await (const part of pipe.stream(prompt, { ...greedy(maxTokens), signal: controller.signal, logprobs: 1 })) {
        if (part.type === 'finish') tally.cachedPromptTokens += part.usage.cachedPromptTokens;
        if (part.type !== 'token') continue;
        ids.push(...part.tokenIds);
        if (ids.length >= stopAt && plan === 'abort') controller.abort();
        if (ids.length >= stopAt && plan === 'abandon') break;
      }
      // An abort that lands after the request's last step is too late to matter:
      // the request finished first, and its output must then be whole.
      if (plan === 'abort' && ids.length < expected.length) {
        crash(new Error(`abort at token ${stopAt} neither aborted nor finished the request (${ids.length} tokens)`));
        return;
      }
      const same = plan === 'finish' ? equal(ids, expected) : equal(ids, expected.slice(0, ids.length));
      if (!same) tally.mismatches++;
      if (plan === 'abandon') tally.abandoned++;
      else tally.completed++;
    } catch (error) {
      if (plan === 'abort' && error instanceof AbortError) {
        tally.aborted++;
        if (!equal(ids, expected.slice(0, ids.length))) tally.mismatches++;
      } else {
        crash(error);
      }
    }
  };
  const worker = async (): Promise<void> => {
    while (next < options.requests && performance.now() - started < (options.timeLimitMs ?? Infinity)) {
      const index = next++;
      if (index === Math.min(options.requests - 1, 2 * concurrency)) heapAfterWarmup = heapAfterGc();
      await oneRequest();
      // Arrivals throughout: a short pause now and then, so admission happens mid-batch.
      if (random() < 0.3) await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 3)));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));

  const stats = pipe.stats();
  const leakedBlocks = stats.kv.pools.reduce((sum, pool) => sum + pool.usedBlocks, 0);
  const unsettled = stats.requests.started - stats.requests.finished;
  await pipe.close();
  process.off('unhandledRejection', onProcessError);
  process.off('uncaughtException', onProcessError);
  for (const error of processErrors.slice(0, 5)) firstErrors.push(`process: ${String(error)}`);
  const heapGrowthMB = (heapAfterGc() - (heapAfterWarmup ?? heapAfterGc())) / 2 ** 20;
  return {
    requests: next,
    ...tally,
    crashes: tally.crashes + processErrors.length,
    leakedBlocks,
    preemptions: stats.preemptions,
    unsettled,
    heapGrowthMB: Math.round(heapGrowthMB * 100) / 100,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    ...(firstErrors.length > 0 && { errors: firstErrors }),
  };
}

/** Prompts with shared prefixes, so the prefix cache hits and evicts under pressure. */
function soakPrompts(): string[] {
  const stems = ['Once upon a time', 'The tool returned', 'Question: what is'];
  const tails = [' a small fox', ' the number 12', ' twelve times seven', ' the weather in Paris'];
  return stems.flatMap((stem) => tails.map((tail) => `${stem}${tail}. ${stem}`));
}

function greedy(maxTokens: number): { maxTokens: number; temperature: number; ignoreEos: boolean } {
  return { maxTokens, temperature: 0, ignoreEos: true };
}

function equal(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return getHeapStatistics().used_heap_size;
}

function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
