/**
 * Real models end to end through the Pipeline: reference greedy outputs token
 * for token, and batch invariance under concurrency, preemption and prefix
 * caching (issue: native CPU backend, correctness).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ModelLoadError, Pipeline, type PipelineOptions } from '../../src/index.js';
import { readReference, sharedModel } from '../native/helpers.js';

const open: Pipeline[] = [];
afterAll(async () => {
  await Promise.all(open.map((pipe) => pipe.close()));
});

async function create(model: string, options: Partial<Omit<PipelineOptions, 'isolation'>> = {}): Promise<Pipeline> {
  const pipe = await Pipeline.create({ model, threads: 2, ...options });
  open.push(pipe);
  return pipe;
}

for (const name of ['stories260K', 'aidreams260K']) {
  const dir = sharedModel(name);
  describe.skipIf(dir === undefined)(`${name} through the Pipeline`, () => {
    const reference = dir === undefined ? undefined : readReference(dir);

    it('reproduces the reference greedy continuations and text', async () => {
      const pipe = await create(dir!);
      for (const c of reference!.cases) {
        expect(pipe.tokenizer.encode(c.prompt)).toEqual(c.prompt_ids);
        const result = await pipe.generate(c.prompt, { maxTokens: c.greedy_ids.length, temperature: 0, ignoreEos: true });
        expect(result.tokenIds).toEqual(c.greedy_ids);
        expect(result.text).toBe((c as unknown as { text: string }).text);
      }
    });

    const variants = [
      { label: 'a roomy cache', kvCache: { size: '64MB' }, scheduler: {} },
      // 1280 bytes per token (5 layers x 4 KV heads x 8 x f32 x K,V): about two requests' worth.
      { label: 'a cache small enough to force preemption', kvCache: { size: 1280 * 100, blockSize: 4, precision: 'f32' as const }, scheduler: { maxNumBatchedTokens: 48 } },
      { label: 'prefix caching and a shared prompt prefix', kvCache: { size: '64MB', blockSize: 4 }, scheduler: { prefixCaching: true, maxNumSeqs: 3 } },
    ];
    for (const variant of variants) {
      it(`gives 8 concurrent prompts their solo greedy outputs with ${variant.label}`, async () => {
        const shared = variant.label.startsWith('prefix') ? 'Once upon a time, there was a little girl named Lily. ' : '';
        const prompts = [
          'Once upon a time',
          'The dog',
          'Lily and Tom went to the park',
          'One day, a big bird',
          'The sun was shining and',
          'Tim had a red ball',
          'There was a little fish',
          'Mom said',
        ].map((p) => shared + p);
        const solo = await create(dir!);
        const expected: number[][] = [];
        for (const prompt of prompts) {
          expected.push((await solo.generate(prompt, { maxTokens: 40, temperature: 0, ignoreEos: true })).tokenIds);
        }
        const pipe = await create(dir!, { kvCache: variant.kvCache, scheduler: variant.scheduler });
        const results = await Promise.all(prompts.map((p) => pipe.generate(p, { maxTokens: 40, temperature: 0, ignoreEos: true })));
        results.forEach((result, i) => expect(result.tokenIds).toEqual(expected[i]));
        const stats = pipe.stats();
        if (variant.label.includes('preemption')) expect(stats.preemptions).toBeGreaterThan(0);
        if (variant.label.startsWith('prefix')) expect(results.some((r) => r.usage.cachedPromptTokens > 0)).toBe(true);
        expect(stats.kv.pools[0]!.usedBlocks).toBe(0);
      });
    }

    // The CPU backend's default cache is f16 (the test above); f32 and u8 give the same greedy output here too.
    for (const precision of ['f32', 'u8'] as const) {
      it(`a ${precision} KV cache gives the same greedy output on this model`, async () => {
        const pipe = await create(dir!, { kvCache: { precision } });
        const c = reference!.cases[0]!;
        const result = await pipe.generate(c.prompt, { maxTokens: c.greedy_ids.length, temperature: 0, ignoreEos: true });
        expect(result.tokenIds).toEqual(c.greedy_ids);
      });
    }
  });
}

describe('loading errors', () => {
  it('a missing model folder is a typed error', async () => {
    const error = await Pipeline.create({ model: '/nonexistent/model' }).catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('MODEL_LOAD_ERROR');
  });

  it.skipIf(sharedModel('stories260K') === undefined)('a loaded pipeline keeps serving after another load failed', async () => {
    const pipe = await create(sharedModel('stories260K')!);
    await expect(Pipeline.create({ model: '/nonexistent/model' })).rejects.toBeInstanceOf(ModelLoadError);
    const result = await pipe.generate('Once upon a time', { maxTokens: 5, temperature: 0 });
    expect(result.tokenIds).toHaveLength(5);
  });
});
