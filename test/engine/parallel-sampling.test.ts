/**
 * n > 1 sampling in the engine (src/engine/parallel-sampling.ts) over the test
 * backend, whose "model" reads each context back through the block tables:
 * a follower that shared a block it should have copied, a copy the backend
 * was not asked for, or a first token drawn from the wrong row changes its
 * output. Every choice is compared with its solo run (seed + i).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine, type FinishInfo, type RequestSink } from '../../src/engine/engine.js';
import { KvCacheManager, type PoolSpec } from '../../src/engine/kv/kv-cache-manager.js';
import type { ModelShape } from '../../src/backends/backend.js';
import type { RequestSpec } from '../../src/engine/request.js';
import { AbortError } from '../../src/errors.js';
import { GREEDY } from '../../src/sampling/params.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

interface Outcome {
  tokens: number[];
  info?: FinishInfo;
}

/** A sink that records; `onToken` may act on the engine (abort) after the n-th token. */
function recorder(onToken?: (count: number) => void): RequestSink & { outcome: Outcome; finished: Promise<FinishInfo> } {
  let resolve!: (info: FinishInfo) => void;
  const finished = new Promise<FinishInfo>((r) => (resolve = r));
  const outcome: Outcome = { tokens: [] };
  return {
    outcome,
    finished,
    onDelta: (delta) => {
      outcome.tokens.push(...delta.tokenIds);
      onToken?.(outcome.tokens.length);
    },
    onFinish: (info) => {
      outcome.info = info;
      resolve(info);
    },
  };
}

interface Setup {
  blocks?: number;
  blockSize?: number;
  maxNumSeqs?: number;
  budget?: number;
  prefixCaching?: boolean;
  pools?: PoolSpec[];
}

function engineFor(setup: Setup = {}): { engine: Engine; kv: KvCacheManager; backend: TestBackend } {
  const { blocks = 200, blockSize = 4, maxNumSeqs = 16, budget = 64, prefixCaching = false } = setup;
  const pools = setup.pools ?? [{ name: 'attention', blockSize, numBlocks: blocks }];
  const backend = new TestBackend(pools.length > 1 ? { extraPools: pools.slice(1).map((p) => ({ name: p.name, blockSize: p.blockSize, bytesPerBlock: 64 })) } : {});
  backend.allocateCache({ numBlocks: blocks, blockSize, precision: 'f32' });
  const kv = new KvCacheManager(pools, { prefixCaching });
  const engine = new Engine({ backend, kv, scheduler: { maxNumSeqs, maxNumBatchedTokens: budget, policy: 'fcfs' }, decoder: new ByteTokenizer(), eosTokenIds: [] });
  return { engine, kv, backend };
}

/** A sampled request (temperature 1: the test backend's rows are peaked, so seeds give different outputs). */
function sampled(prompt: string, seed: number, maxTokens = 24): RequestSpec {
  return {
    promptTokenIds: [...new TextEncoder().encode(prompt)],
    sampling: { ...GREEDY, temperature: 1, seed },
    stop: { maxTokens, stopTokenIds: [], stopStrings: [], ignoreEos: true },
    priority: 0,
  };
}

/** The tokens of `spec` run alone on a fresh engine. */
async function solo(spec: RequestSpec, setup: Setup = {}): Promise<number[]> {
  const { engine } = engineFor({ ...setup, blocks: 400, prefixCaching: false });
  const sink = recorder();
  expect(engine.add(spec, sink).ok).toBe(true);
  await sink.finished;
  return sink.outcome.tokens;
}

describe('n > 1 sampling in the engine', () => {
  it('computes the prompt once, forks it into n - 1 followers, and each choice equals its solo run with seed + i', async () => {
    const { engine, kv, backend } = engineFor();
    backend.recordBatches = true;
    const spec = sampled('a prompt of 22 tokens!', 100); // 22 tokens: 5 full blocks of 4 and a partial one
    const sinks = [recorder(), recorder(), recorder(), recorder()];
    const ids = engine.addChoices(spec, sinks);
    expect(ids.ok && ids.value.length).toBe(4);
    await Promise.all(sinks.map((s) => s.finished));
    const outputs = sinks.map((s) => s.outcome.tokens);
    for (let i = 0; i < 4; i++) expect(outputs[i]).toEqual(await solo(sampled('a prompt of 22 tokens!', 100 + i)));
    expect(new Set(outputs.map((o) => o.join(','))).size).toBeGreaterThan(1); // the seeds differ
    const stats = engine.stats();
    expect(stats.forks).toBe(3);
    // The prompt once, then each choice's generated tokens but its last.
    expect(stats.computedTokens).toBe(22 + 4 * (24 - 1));
    // The step after the fork asked the backend for the three tail copies, from the leader's tail block.
    const copying = backend.steps.filter((batch) => batch.blockCopies !== undefined);
    expect(copying).toHaveLength(1);
    const copies = copying[0]!.blockCopies!;
    expect(copies.length).toBe(6);
    expect(new Set([copies[0], copies[2], copies[4]]).size).toBe(1);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
    kv.checkInvariants();
  });

  it('a prompt that ends on a block boundary forks with no copy at all', async () => {
    const { engine, kv, backend } = engineFor();
    backend.recordBatches = true;
    const spec = sampled('sixteen tokens!!', 7);
    const sinks = [recorder(), recorder()];
    engine.addChoices(spec, sinks);
    await Promise.all(sinks.map((s) => s.finished));
    expect(sinks[1]!.outcome.tokens).toEqual(await solo(sampled('sixteen tokens!!', 8)));
    expect(backend.steps.some((batch) => batch.blockCopies !== undefined)).toBe(false);
    expect(engine.stats().forks).toBe(1);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });

  it('forks a prompt that was a prefix-cache hit, as one that was not', async () => {
    const { engine, kv } = engineFor({ prefixCaching: true });
    const prompt = 'a shared system prompt, then a question';
    const first = recorder();
    engine.add(sampled(prompt, 1), first);
    await first.finished;
    const sinks = [recorder(), recorder(), recorder()];
    engine.addChoices(sampled(prompt, 50), sinks);
    await Promise.all(sinks.map((s) => s.finished));
    for (let i = 0; i < 3; i++) expect(sinks[i]!.outcome.tokens).toEqual(await solo(sampled(prompt, 50 + i)));
    expect(sinks[0]!.outcome.info!.cachedPromptTokens).toBeGreaterThan(0);
    expect(sinks[2]!.outcome.info!.cachedPromptTokens).toBe(sinks[0]!.outcome.info!.cachedPromptTokens);
    expect(engine.stats().forks).toBe(2);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });

  it('each choice is cancellable: aborting one mid-way leaves the others their solo output', async () => {
    const { engine, kv } = engineFor();
    const spec = sampled('cancel one of four', 30, 30);
    let ids: number[] = [];
    const sinks = [0, 1, 2, 3].map((i) => recorder((count) => i === 2 && count === 5 && engine.abort(ids[2]!, new AbortError('one choice'))));
    const added = engine.addChoices(spec, sinks);
    if (added.ok) ids = added.value;
    await Promise.all(sinks.map((s) => s.finished));
    expect(sinks[2]!.outcome.info!.reason).toBe('aborted');
    expect(sinks[2]!.outcome.tokens).toHaveLength(5);
    for (const i of [0, 1, 3]) {
      expect(sinks[i]!.outcome.info!.reason).toBe('length');
      expect(sinks[i]!.outcome.tokens).toEqual(await solo(sampled('cancel one of four', 30 + i, 30)));
    }
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });

  it('a leader aborted before its prompt is computed hands the prompt to the next choice (P4); a follower aborted before the fork just leaves', async () => {
    const { engine, kv } = engineFor({ budget: 4 }); // a 30-token prompt takes 8 steps
    const spec = sampled('a long prompt, chunked in fours', 60, 10);
    const sinks = [recorder(), recorder(), recorder(), recorder()];
    const added = engine.addChoices(spec, sinks);
    if (!added.ok) throw new Error('not added');
    engine.abort(added.value[1]!, new AbortError('a follower, before the fork'));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    engine.abort(added.value[0]!, new AbortError('the leader, mid-prompt'));
    await Promise.all(sinks.map((s) => s.finished));
    expect(sinks[0]!.outcome.info!.reason).toBe('aborted');
    expect(sinks[1]!.outcome.info!.reason).toBe('aborted');
    for (const i of [2, 3]) expect(sinks[i]!.outcome.tokens).toEqual(await solo(sampled('a long prompt, chunked in fours', 60 + i, 10), { budget: 4 }));
    expect(engine.stats().forks).toBe(1); // choice 3 forked from choice 2
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });

  it('the seed workload with n = 4 under KV pressure: preemptions, every choice equals its solo run, zero blocks in use', async () => {
    // 6 requests of n = 4, each choice ~ (20 + 40) / 4 = 15 blocks; 70 blocks hold about 4 choices.
    const { engine, kv } = engineFor({ blocks: 70, budget: 48, prefixCaching: true });
    const prompts = Array.from({ length: 6 }, (_, i) => `request ${i}: ${'context '.repeat(1 + (i % 2))}`.slice(0, 20));
    const groups = prompts.map((prompt, r) => {
      const sinks = [0, 1, 2, 3].map(() => recorder());
      expect(engine.addChoices(sampled(prompt, 1000 * r, 40), sinks).ok).toBe(true);
      return sinks;
    });
    await Promise.all(groups.flat().map((s) => s.finished));
    const stats = engine.stats();
    expect(stats.preemptions).toBeGreaterThan(0);
    expect(stats.forks).toBeGreaterThan(0);
    for (let r = 0; r < groups.length; r++) {
      for (let i = 0; i < 4; i++) {
        expect(groups[r]![i]!.outcome.info!.reason).toBe('length');
        expect(groups[r]![i]!.outcome.tokens).toEqual(await solo(sampled(prompts[r]!, 1000 * r + i, 40)));
      }
    }
    expect(stats.running + stats.waiting).toBe(0);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
    kv.checkInvariants();
  });

  it('with maxNumSeqs reached the followers do not fork: they queue and prefill on their own (P2), output unchanged', async () => {
    const { engine, kv } = engineFor({ maxNumSeqs: 1 });
    const sinks = [recorder(), recorder(), recorder()];
    engine.addChoices(sampled('one at a time', 5, 8), sinks);
    await Promise.all(sinks.map((s) => s.finished));
    for (let i = 0; i < 3; i++) expect(sinks[i]!.outcome.tokens).toEqual(await solo(sampled('one at a time', 5 + i, 8)));
    expect(engine.stats()).toMatchObject({ forks: 0, computedTokens: 3 * (13 + 7) });
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });

  it('on a backend that cannot copy blocks (ModelShape.copiesBlocks false) the choices run on their own, and no copy is asked for', async () => {
    const { engine, kv, backend } = engineFor();
    (backend as { shape: ModelShape }).shape = { ...backend.shape, copiesBlocks: false };
    backend.recordBatches = true;
    const sinks = [recorder(), recorder(), recorder()];
    engine.addChoices(sampled('a device cache', 12, 8), sinks);
    await Promise.all(sinks.map((s) => s.finished));
    for (let i = 0; i < 3; i++) expect(sinks[i]!.outcome.tokens).toEqual(await solo(sampled('a device cache', 12 + i, 8)));
    expect(engine.stats().forks).toBe(0);
    expect(backend.steps.some((batch) => batch.blockCopies !== undefined)).toBe(false);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });

  it('on a hybrid model (recurrent state is not forked) the choices run on their own, output unchanged', async () => {
    const pools: PoolSpec[] = [
      { name: 'attention', blockSize: 4, numBlocks: 200 },
      { name: 'linear-state', blockSize: Infinity, numBlocks: 8 },
    ];
    const { engine, kv } = engineFor({ pools });
    const sinks = [recorder(), recorder()];
    engine.addChoices(sampled('hybrid prompt', 9, 8), sinks);
    await Promise.all(sinks.map((s) => s.finished));
    for (let i = 0; i < 2; i++) expect(sinks[i]!.outcome.tokens).toEqual(await solo(sampled('hybrid prompt', 9 + i, 8), { pools }));
    expect(engine.stats().forks).toBe(0);
    for (const pool of kv.stats()) expect(pool.usedBlocks).toBe(0);
  });

  it('a leader that verifies a draft in the step that completes its prompt (its last prefill chunk is one token) forks as well', async () => {
    // 17 tokens over a budget of 16: the second step has one pending prompt token, and the leader drafts with it.
    const { engine, kv, backend } = engineFor({ budget: 16 });
    backend.recordBatches = true;
    const spec: RequestSpec = { ...sampled('abcdabcdabcdabcda', 0, 20), sampling: GREEDY, speculative: { method: 'prompt-lookup', tokens: 4, ngram: 2 } };
    const sinks = [recorder(), recorder(), recorder()];
    engine.addChoices(spec, sinks);
    await Promise.all(sinks.map((s) => s.finished));
    expect(backend.steps[1]!.logitsIndices.length).toBeGreaterThan(1); // the leader verified draft tokens in the step that forked
    const greedy = await solo({ ...spec, speculative: undefined } as RequestSpec);
    for (const s of sinks) expect(s.outcome.tokens).toEqual(greedy);
    expect(engine.stats().forks).toBe(2);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
    kv.checkInvariants();
  });

  it('greedy choices with speculative decoding are each the greedy output', async () => {
    const { engine, kv } = engineFor();
    const spec: RequestSpec = { ...sampled('abcabcabcabcabc', 0, 20), sampling: GREEDY, speculative: { method: 'prompt-lookup', tokens: 4, ngram: 2 } };
    const sinks = [recorder(), recorder(), recorder()];
    engine.addChoices(spec, sinks);
    await Promise.all(sinks.map((s) => s.finished));
    const greedy = await solo({ ...spec, speculative: undefined } as RequestSpec);
    for (const s of sinks) expect(s.outcome.tokens).toEqual(greedy);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });
});
