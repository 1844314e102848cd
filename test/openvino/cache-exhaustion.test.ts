/**
 * The seed's workload on the OpenVINO backend (weft-demo f32 IR, CPU plugin):
 * 16 concurrent long generations over a cache that fits about two, maxNumSeqs 16,
 * random aborts and abandoned streams. Everything ends, no block stays used, and
 * every output that was not aborted equals the same request run alone.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OpenVinoBackend } from '../../src/backends/openvino/openvino-backend.js';
import { AbortError } from '../../src/errors.js';
import { Pipeline } from '../../src/index.js';
import { DEMO_IR, describeOpenVino } from './helpers.js';

const MAX_TOKENS = 160;

describeOpenVino('OpenVINO backend under cache exhaustion (the OVMS crash scenario)', () => {
  let pressured: Pipeline;
  let roomy: Pipeline;
  let promptLen = 0;
  beforeAll(async () => {
    const base = { model: DEMO_IR('f32'), device: 'openvino:CPU', threads: 2, openvino: { inferencePrecision: 'f32' as const } };
    roomy = await Pipeline.create({ ...base, kvCache: { size: '64MB', precision: 'f32' } });
    promptLen = roomy.tokenizer.encode(prompt(15)).length;
    // Bytes per token from the compiled cache layout: room for about two whole requests.
    const probe = await OpenVinoBackend.load(DEMO_IR('f32'), { inferencePrecision: 'f32', kvPrecision: 'f32', threads: 1 });
    const { kvBlockBytes, kvBlockSize } = probe.shape as Required<typeof probe.shape>;
    await probe.dispose();
    const twoRequests = Math.ceil((2 * (promptLen + MAX_TOKENS) + 2 * kvBlockSize) * (kvBlockBytes / kvBlockSize));
    pressured = await Pipeline.create({ ...base, kvCache: { size: twoRequests, precision: 'f32' }, scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 256 } });
  });
  afterAll(async () => {
    await pressured?.close();
    await roomy?.close();
  });

  it('16 long generations, cache for ~2, aborts and breaks: all end, zero used blocks, outputs equal solo runs', async () => {
    const rng = seeded(11);
    const prompts = Array.from({ length: 16 }, (_, i) => prompt(i));
    const plans = prompts.map(() => {
      const roll = rng();
      return roll < 0.25 ? 'abort' : roll < 0.45 ? 'break' : 'finish';
    });
    const options = { maxTokens: MAX_TOKENS, ignoreEos: true, temperature: 0 };
    const solo: number[][] = [];
    for (const p of prompts) solo.push((await roomy.generate(p, options)).tokenIds);
    const outcomes = await Promise.allSettled(
      prompts.map(async (text, i) => {
        const controller = new AbortController();
        const stopAt = 1 + Math.floor(rng() * 80);
        const ids: number[] = [];
        for await (const part of pressured.stream(text, { ...options, signal: controller.signal, logprobs: 1 })) {
          if (part.type !== 'token') continue;
          ids.push(...part.tokenIds);
          if (plans[i] === 'abort' && ids.length >= stopAt) controller.abort();
          if (plans[i] === 'break' && ids.length >= stopAt) break;
        }
        return ids;
      }),
    );
    outcomes.forEach((outcome, i) => {
      if (plans[i] === 'abort') {
        expect(outcome.status).toBe('rejected');
        if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(AbortError);
        return;
      }
      expect(outcome.status).toBe('fulfilled');
      if (outcome.status !== 'fulfilled') return;
      expect(outcome.value).toEqual(solo[i]!.slice(0, outcome.value.length));
      if (plans[i] === 'finish') expect(outcome.value).toEqual(solo[i]);
    });
    const stats = pressured.stats();
    expect(stats.preemptions).toBeGreaterThan(0);
    expect(stats.running + stats.waiting).toBe(0);
    for (const pool of stats.kv.pools) expect(pool.usedBlocks).toBe(0);
    // The pipeline still serves after the storm.
    const after = await pressured.generate(prompts[0]!, options);
    expect(after.tokenIds).toEqual(solo[0]);
  }, 240_000);
});

function prompt(i: number): string {
  return `Request ${i}: tell me a long story about ${['ships', 'trains', 'rivers', 'clocks'][i % 4]} and ${i} cats.`;
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
}
