/**
 * A hybrid model (Qwen3.5) through the whole engine: the seed's scenario on
 * the model family it ran. Many concurrent greedy generations over a cache
 * that holds about two of them, with aborts, at several step sizes: every
 * finished output equals transformers' reference ids, preemption happens, and
 * both pools (attention KV and linear state) are empty once idle.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { CHECKPOINT_POOL, LINEAR_STATE_POOL } from '../../src/backends/cpu/cpu-backend.js';
import { Pipeline } from '../../src/create.js';
import { AbortError } from '../../src/errors.js';
import { harness } from '../support/harness.js';
import { IdTokenizer } from '../support/id-tokenizer.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';

const fixture = (name: string) => join(REPO_ROOT, 'test', 'fixtures', name);
const DIR = fixture('qwen35-tiny');

interface Case {
  prompt_ids: number[];
  greedy_ids: number[];
}

const casesOf = (dir: string) => (readReference(dir) as unknown as { cases: Case[] }).cases;
const cases = casesOf(DIR);
// 16 requests: every reference prompt, most of them twice or more.
const requestsOf = (all: Case[]) => Array.from({ length: 16 }, (_, i) => all[(i * 5) % all.length]!);
const requests = requestsOf(cases);

// f16 attention KV (the CPU default): 2 attention layers x 2 KV heads x 16 dims x 2 (K, V) x 2 bytes.
const BLOCK_SIZE = 16;
const KV_BLOCK_BYTES = 2 * 2 * 16 * 2 * 2 * BLOCK_SIZE;

// Qwen3-Next (fused projections, mixture of experts) has the same attention and state shapes.
describe.each(['qwen35-tiny', 'qwen3next-tiny'])('%s through the engine under cache pressure', (name) => {
  const dir = fixture(name);
  const requests = requestsOf(casesOf(dir));
  const runs = [16, 64, 2048].flatMap((maxNumBatchedTokens) => [true, false].map((prefixCaching) => ({ maxNumBatchedTokens, prefixCaching })));
  it.each(runs)('16 generations, room for about two, maxNumBatchedTokens $maxNumBatchedTokens, prefix caching $prefixCaching, with aborts: outputs equal the reference', async ({ maxNumBatchedTokens, prefixCaching }) => {
    const backend = await CpuBackend.load(dir, { threads: 2 });
    const statePool = backend.shape.extraPools!.find((p) => p.name === LINEAR_STATE_POOL)!;
    // One state slot per possible running request, plus 40 KV blocks (the longest request takes 21)
    // and, with prefix caching, their share of checkpoints (one state per 32 tokens).
    const maxNumSeqs = 16;
    const checkpointShare = prefixCaching ? (BLOCK_SIZE / 32) * statePool.bytesPerBlock : 0;
    const size = maxNumSeqs * statePool.bytesPerBlock + 40 * (KV_BLOCK_BYTES + checkpointShare);
    const pipe = await Pipeline.create({
      backend,
      tokenizer: new IdTokenizer(384, [2]),
      // With prefix caching, a checkpoint every 32 tokens: prompts repeat, so hits resume from them.
      kvCache: { size, blockSize: BLOCK_SIZE, ...(prefixCaching && { checkpointInterval: 32 }) },
      scheduler: { maxNumSeqs, maxNumBatchedTokens, prefixCaching },
    });
    try {
      const aborted = new Set([3, 8, 13]);
      let cachedPromptTokens = 0;
      const outcomes = await Promise.allSettled(
        requests.map(async (c, i) => {
          const controller = new AbortController();
          const ids: number[] = [];
          for await (const part of pipe.stream(c.prompt_ids, { maxTokens: 32, ignoreEos: true, temperature: 0, logprobs: 1, signal: controller.signal })) {
            if (part.type === 'finish') cachedPromptTokens += part.usage.cachedPromptTokens;
            if (part.type !== 'token') continue;
            ids.push(...part.tokenIds);
            if (aborted.has(i) && ids.length >= 5 + i) controller.abort();
          }
          return ids;
        }),
      );
      outcomes.forEach((outcome, i) => {
        if (aborted.has(i)) {
          expect(outcome.status).toBe('rejected');
          if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(AbortError);
        } else {
          expect(outcome.status, `request ${i}`).toBe('fulfilled');
          if (outcome.status === 'fulfilled') expect(outcome.value, `request ${i}`).toEqual(requests[i]!.greedy_ids);
        }
      });
      const stats = pipe.stats();
      expect(stats.kv.pools.map((p) => p.name)).toEqual(prefixCaching ? ['attention', LINEAR_STATE_POOL, CHECKPOINT_POOL] : ['attention', LINEAR_STATE_POOL]);
      expect(stats.kv.prefixCaching).toBe(prefixCaching);
      // Repeated prompts hit the prefix cache and resume from checkpoints.
      if (prefixCaching) expect(cachedPromptTokens).toBeGreaterThan(0);
      else expect(cachedPromptTokens).toBe(0);
      expect(stats.preemptions).toBeGreaterThan(0);
      expect(stats.running + stats.waiting).toBe(0);
      for (const pool of stats.kv.pools) expect(pool.usedBlocks, pool.name).toBe(0);
    } finally {
      await pipe.close();
    }
  });
});

describe('qwen35-tiny: chat turns and budgets', () => {
  it('a chat\'s later turns reuse the earlier ones from the cache, with the same output as without prefix caching', async () => {
    // Turn n's prompt is turn n-1's prompt and reply plus new tokens, as a chat template makes it.
    const turns = async (prefixCaching: boolean) => {
      const backend = await CpuBackend.load(DIR, { threads: 2 });
      const pipe = await Pipeline.create({
        backend, tokenizer: new IdTokenizer(384, [2]),
        kvCache: { size: '4MB', blockSize: BLOCK_SIZE, checkpointInterval: 64 }, scheduler: { prefixCaching },
      });
      try {
        let prompt = cases[3]!.prompt_ids; // 64 tokens
        const results: Array<{ ids: number[]; cached: number; promptTokens: number }> = [];
        for (let turn = 0; turn < 4; turn++) {
          const r = await pipe.generate(prompt, { maxTokens: 24, ignoreEos: true, temperature: 0 });
          results.push({ ids: r.tokenIds, cached: r.usage.cachedPromptTokens, promptTokens: r.usage.promptTokens });
          prompt = [...prompt, ...r.tokenIds, ...cases[5]!.prompt_ids.slice(turn * 20, turn * 20 + 20)];
        }
        return results;
      } finally {
        await pipe.close();
      }
    };
    const cached = await turns(true);
    const uncached = await turns(false);
    expect(cached.map((t) => t.ids)).toEqual(uncached.map((t) => t.ids));
    expect(cached[0]!.ids).toEqual(cases[3]!.greedy_ids.slice(0, 24));
    expect(uncached.every((t) => t.cached === 0)).toBe(true);
    expect(cached[0]!.cached).toBe(0);
    // Each later turn resumes at the last checkpoint (every 64 tokens) inside the previous turn's context.
    cached.slice(1).forEach((t, i) => {
      const previousContext = cached[i]!.promptTokens + 24;
      expect(t.cached, `turn ${i + 1}`).toBe(Math.floor(previousContext / 64) * 64);
      expect(t.cached).toBeGreaterThan(0);
    });
  });

  it('a budget too small for the state slots is refused at create, naming kvCache.size', async () => {
    const backend = await CpuBackend.load(DIR, { threads: 1 });
    try {
      await expect(Pipeline.create({ backend, tokenizer: new IdTokenizer(384, [2]), kvCache: { size: 4096, blockSize: BLOCK_SIZE }, scheduler: { maxNumSeqs: 4 } }))
        .rejects.toThrow(/kvCache\.size/);
    } finally {
      await backend.dispose();
    }
  });
});

describe('kvCache.checkpointInterval', () => {
  it('is refused for a model without linear-attention state, and when not a multiple of the block size', async () => {
    await expect(harness({ kvCache: { checkpointInterval: 64 } })).rejects.toThrow(/kvCache\.checkpointInterval: this model keeps no linear-attention state/);
    const backend = await CpuBackend.load(DIR, { threads: 1 });
    try {
      await expect(Pipeline.create({ backend, tokenizer: new IdTokenizer(384, [2]), kvCache: { size: '2MB', checkpointInterval: 40 } }))
        .rejects.toThrow(/40 tokens is not a multiple of kvCache.blockSize \(16\); use e.g. 48/);
    } finally {
      await backend.dispose();
    }
  });
});
