/**
 * n > 1 on real models through the native CPU backend (docs/parallel-sampling.md):
 * the prompt computed once and forked (the step after carries StepBatch.blockCopies,
 * which the native cache performs), every choice token for token its solo run with
 * seed + i, also with a cache small enough to preempt; nothing left in the cache.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { Pipeline, type PipelineOptions } from '../../src/index.js';
import { QWEN3_TINY, REPO_ROOT } from '../native/helpers.js';
import { IdTokenizer } from '../support/id-tokenizer.js';

const DEMO = join(REPO_ROOT, 'models', 'weft-demo');
const open: Pipeline[] = [];
afterAll(async () => {
  await Promise.all(open.map((pipe) => pipe.close()));
});

/** Bytes of f32 K and V for one token, from config.json. */
function kvBytesPerToken(dir: string): number {
  const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
  const headDim = c.head_dim ?? c.hidden_size! / c.num_attention_heads!;
  return c.num_hidden_layers! * c.num_key_value_heads! * headDim * 2 * 4;
}

async function create(model: string, options: Partial<Omit<PipelineOptions, 'isolation'>> = {}): Promise<Pipeline> {
  let pipe: Pipeline;
  if (model === QWEN3_TINY) {
    const backend = await CpuBackend.load(model, { threads: 2 });
    pipe = await Pipeline.create({ backend, tokenizer: new IdTokenizer(backend.shape.vocabSize), ...options });
  } else pipe = await Pipeline.create({ model, threads: 2, ...options });
  open.push(pipe);
  return pipe;
}

const models = [
  { name: 'qwen3-tiny', dir: existsSync(join(QWEN3_TINY, 'model.safetensors')) ? QWEN3_TINY : undefined },
  { name: 'weft-demo', dir: existsSync(join(DEMO, 'model.safetensors')) ? DEMO : undefined },
];
if (models.some((m) => m.dir === undefined)) console.warn('parallel-sampling-models.test: a model is missing (test/fixtures/qwen3-tiny or models/weft-demo); skipping it');

const PROMPTS = ['Once upon a time', 'Lily and Tom went to the park. Lily and Tom went to the', 'The dog ran.'];

for (const { name, dir } of models) {
  describe.skipIf(dir === undefined)(`n > 1 on ${name}`, () => {
    const promptOf = (text: string) => (dir === QWEN3_TINY ? [...text].map((c) => c.charCodeAt(0)) : text);
    const options = { temperature: 0.9, topP: 0.95, maxTokens: 24, ignoreEos: true };

    it('every choice equals its solo run with seed + i, batched with other requests', async () => {
      const pipe = await create(dir!);
      const results = await Promise.all(PROMPTS.map((text, r) => pipe.generate(promptOf(text), { ...options, seed: 10 * r, n: 4 })));
      expect(pipe.stats().forks).toBe(3 * PROMPTS.length);
      for (const [r, result] of results.entries()) {
        for (let i = 0; i < 4; i++) {
          const solo = await pipe.generate(promptOf(PROMPTS[r]!), { ...options, seed: 10 * r + i });
          expect(result.choices![i]!.tokenIds).toEqual(solo.tokenIds);
        }
      }
      expect(pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
    });

    it('under KV pressure (preemptions) every choice still equals its solo run, and no block stays in use', async () => {
      const pipe = await create(dir!, { kvCache: { size: kvBytesPerToken(dir!) * 200, blockSize: 4, precision: 'f32' }, scheduler: { maxNumBatchedTokens: 40 } });
      const results = await Promise.all(PROMPTS.map((text, r) => pipe.generate(promptOf(text), { ...options, maxTokens: 40, seed: 7 + 10 * r, n: 4 })));
      expect(pipe.stats().preemptions).toBeGreaterThan(0);
      const reference = await create(dir!, { kvCache: { size: '16MB', precision: 'f32' } });
      for (const [r, result] of results.entries()) {
        for (let i = 0; i < 4; i++) {
          const solo = await reference.generate(promptOf(PROMPTS[r]!), { ...options, maxTokens: 40, seed: 7 + 10 * r + i });
          expect(result.choices![i]!.tokenIds).toEqual(solo.tokenIds);
        }
      }
      for (const pool of pipe.stats().kv.pools) expect(pool.usedBlocks).toBe(0);
    });
  });
}

describe.skipIf(!existsSync(join(DEMO, 'model.safetensors')))('n > 1 through an isolated pipeline (the engine in a child process)', () => {
  it('gives the same choices as in process, parts tagged with their choice', async () => {
    const isolated = await Pipeline.create({ model: DEMO, threads: 2, isolation: 'process' });
    try {
      const options = { temperature: 0.9, maxTokens: 16, ignoreEos: true, seed: 3, n: 3 };
      const local = await create(DEMO);
      const [there, here] = [await isolated.generate('Hello', options), await local.generate('Hello', options)];
      expect(there.choices!.map((c) => c.tokenIds)).toEqual(here.choices!.map((c) => c.tokenIds));
      const seen = new Set<number>();
      for await (const part of isolated.stream('Hello', options)) if (part.type === 'finish') seen.add(part.choice!);
      expect([...seen].sort()).toEqual([0, 1, 2]);
    } finally {
      await isolated.close();
    }
  });
});
