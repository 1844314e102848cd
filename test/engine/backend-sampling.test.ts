/**
 * The CPU backend runs the sampling chain of unguided sampled requests on its
 * own threads (StepBatch.sampling, StepResult.sampled): with a real model, the
 * same seeds give the same tokens and log probabilities as the engine's JS
 * sampler (the same model behind a backend that drops `sampling`), alone and
 * batched; guided requests still sample in JavaScript after their mask.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, StepBatch, StepResult } from '../../src/backends/backend.js';
import { CpuBackend } from '../../src/backends/cpu/cpu-backend.js';
import { Pipeline } from '../../src/create.js';
import { SAMPLING_PARAMS } from '../../src/backends/backend.js';
import { buildBatch as stepBatch, sharedModel } from '../native/helpers.js';

const model = sharedModel('stories260K');

/** Wraps a backend, recording the batches' sampling and (optionally) dropping it so the engine samples in JS. */
class Recording implements Backend {
  readonly askedRows: number[] = [];
  readonly answered: number[] = [];
  constructor(
    readonly inner: CpuBackend,
    private readonly drop: boolean,
  ) {}
  get shape() {
    return this.inner.shape;
  }
  allocateCache(config: Parameters<Backend['allocateCache']>[0]): Promise<void> {
    return this.inner.allocateCache(config);
  }
  async execute(batch: StepBatch): Promise<StepResult> {
    const { sampling, ...rest } = batch;
    this.askedRows.push(sampling === undefined ? 0 : sampling.rows.reduce((sum, row) => sum + row, 0));
    const result = await this.inner.execute(this.drop ? rest : batch);
    this.answered.push(result.sampled === undefined ? 0 : result.sampled.flags.reduce((sum, flags) => sum + (flags & 1), 0));
    return result;
  }
  release(result: StepResult): void {
    this.inner.release(result);
  }
  dispose(): Promise<void> {
    return this.inner.dispose();
  }
}

const REQUESTS = [
  { temperature: 0.7, topP: 0.9, seed: 1 },
  { temperature: 0.7, topK: 40, seed: 2 },
  { temperature: 1.2, minP: 0.05, seed: 3, logprobs: 3 },
  { temperature: 0.8, topP: 0.95, repetitionPenalty: 1.3, presencePenalty: 0.5, frequencyPenalty: 0.3, seed: 4, logprobs: 5 },
  { temperature: 0, repetitionPenalty: 1.5, logprobs: 2, seed: 5 },
  { temperature: 1e-6, topK: 1000, topP: 1e-9, seed: 6 },
  { temperature: 2, topK: 100_000, seed: 7 },
  { temperature: 0 },
];

describe.skipIf(model === undefined)('sampling on the CPU backend', () => {
  let native: Recording;
  let js: Recording;
  let nativePipe: Pipeline;
  let jsPipe: Pipeline;
  let base: Pipeline;
  beforeAll(async () => {
    native = new Recording(await CpuBackend.load(model!, { threads: 2 }), false);
    js = new Recording(await CpuBackend.load(model!, { threads: 2 }), true);
    base = await Pipeline.create({ model: model!, threads: 1, kvCache: { size: 1 << 20 } });
    nativePipe = await Pipeline.create({ backend: native, tokenizer: base.tokenizer, kvCache: { size: 8 << 20 } });
    jsPipe = await Pipeline.create({ backend: js, tokenizer: base.tokenizer, kvCache: { size: 8 << 20 } });
  });
  afterAll(async () => {
    await nativePipe?.close();
    await jsPipe?.close();
    await base?.close();
  });

  const run = (pipe: Pipeline, options: (typeof REQUESTS)[number], i: number) =>
    pipe.generate(`Once upon a time ${i}`, { ...options, maxTokens: 24, ignoreEos: true });

  it('gives the JS sampler tokens and logprobs, batched', async () => {
    const [a, b] = await Promise.all([Promise.all(REQUESTS.map((o, i) => run(nativePipe, o, i))), Promise.all(REQUESTS.map((o, i) => run(jsPipe, o, i)))]);
    for (let i = 0; i < REQUESTS.length; i++) {
      expect(a[i]!.tokenIds, JSON.stringify(REQUESTS[i])).toEqual(b[i]!.tokenIds);
      expect(a[i]!.logprobs, JSON.stringify(REQUESTS[i])).toEqual(b[i]!.logprobs);
    }
    // The backend sampled every sampled row (7 of the 8 requests are not plain greedy); the JS side none.
    expect(Math.max(...native.answered)).toBe(7);
    expect(Math.max(...js.answered)).toBe(0);
  });

  it('gives the same tokens alone as batched', async () => {
    const batched = await Promise.all(REQUESTS.map((o, i) => run(nativePipe, o, i)));
    for (let i = 0; i < REQUESTS.length; i++) expect((await run(nativePipe, REQUESTS[i]!, i)).tokenIds).toEqual(batched[i]!.tokenIds);
  });

  it('samples guided rows after their mask (filled while the step runs), as the JS path does', async () => {
    native.askedRows.length = 0;
    native.answered.length = 0;
    const format = { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string' } }, required: ['a', 'b'] } } as const;
    const requests = [
      { temperature: 0.9, seed: 11, maxTokens: 40, responseFormat: format },
      { temperature: 0, maxTokens: 40, responseFormat: format },
      { temperature: 1.1, topK: 20, seed: 12, maxTokens: 40, responseFormat: format, logprobs: 2, repetitionPenalty: 1.2 },
    ];
    const [a, b] = await Promise.all([
      Promise.all(requests.map((o, i) => nativePipe.generate(`json ${i}:`, o))),
      Promise.all(requests.map((o, i) => jsPipe.generate(`json ${i}:`, o))),
    ]);
    for (let i = 0; i < requests.length; i++) {
      expect(a[i]!.tokenIds).toEqual(b[i]!.tokenIds);
      expect(a[i]!.text).toBe(b[i]!.text);
      expect(a[i]!.logprobs).toEqual(b[i]!.logprobs);
    }
    // The masked steps were sampled by the backend (free text inside the string is drawn in JS).
    expect(native.answered.some((rows) => rows > 0)).toBe(true);
  });

  it('rejects a malformed StepBatch.sampling before the step runs, and keeps serving', async () => {
    const base = stepBatch([{ tokens: [1, 2, 3], pastLen: 0, blocks: [1] }]);
    const good = {
      rows: Uint8Array.of(1),
      params: new Float64Array(SAMPLING_PARAMS),
      seen: new Int32Array(0),
      seenBegins: new Int32Array(2),
      counted: new Int32Array(0),
      counts: new Int32Array(0),
      countedBegins: new Int32Array(2),
    };
    const bad = [
      { ...good, rows: Uint8Array.of(1, 1) },
      { ...good, params: new Float64Array(3) },
      { ...good, seenBegins: Int32Array.of(0, 5) },
      { ...good, params: Float64Array.from({ length: SAMPLING_PARAMS }, (_, i) => (i === SAMPLING_PARAMS - 1 ? 1.5 : 0)) },
      { ...good, masks: [new Uint32Array(1)], masksReady: new Int32Array(new SharedArrayBuffer(4)) },
    ];
    for (const sampling of bad) await expect(native.inner.execute({ ...base, sampling })).rejects.toThrow(/sampling/);
    expect((await run(nativePipe, REQUESTS[0]!, 0)).tokenIds.length).toBe(24);
  });
});
