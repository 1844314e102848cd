/**
 * The engine loop's handler for what cannot happen: an exception inside a step
 * (here a decoder that throws) fails the live requests with EngineError and a
 * log line, and the engine serves the next request as if nothing happened.
 */
import { describe, expect, it } from 'vitest';
import { Engine, type FinishInfo, type RequestSink } from '../../src/engine/engine.js';
import { KvCacheManager } from '../../src/engine/kv/kv-cache-manager.js';
import type { RequestSpec } from '../../src/engine/request.js';
import { EngineError } from '../../src/errors.js';
import { GREEDY } from '../../src/sampling/params.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';

function sink(): RequestSink & { finished: Promise<FinishInfo> } {
  let resolve!: (info: FinishInfo) => void;
  const finished = new Promise<FinishInfo>((r) => (resolve = r));
  return { onDelta: () => {}, onFinish: (info) => resolve(info), finished };
}

const spec = (prompt: string): RequestSpec => ({
  promptTokenIds: [...new TextEncoder().encode(prompt)],
  sampling: GREEDY,
  stop: { maxTokens: 4, stopTokenIds: [], stopStrings: [], ignoreEos: true },
  priority: 0,
});

describe('the engine loop', () => {
  it('turns an exception inside a step into EngineError for the live requests, and keeps serving', async () => {
    const backend = new TestBackend();
    const kv = new KvCacheManager([{ name: 'attention', blockSize: 4, numBlocks: 64 }], { prefixCaching: false });
    await backend.allocateCache({ numBlocks: 64, blockSize: 4, precision: 'f32' });
    const tokenizer = new ByteTokenizer();
    let broken = true;
    const decoder = {
      decode: (ids: readonly number[], options?: { skipSpecialTokens?: boolean }) => {
        if (broken) throw new Error('decoder bug');
        return tokenizer.decode(ids, options);
      },
    };
    const logs: string[] = [];
    const engine = new Engine({
      backend,
      kv,
      scheduler: { maxNumSeqs: 4, maxNumBatchedTokens: 64, policy: 'fcfs' },
      decoder,
      eosTokenIds: [],
      observer: { onLog: (line) => logs.push(line) },
    });
    const [a, b] = [sink(), sink()];
    expect(engine.add(spec('first'), a).ok).toBe(true);
    expect(engine.add(spec('second'), b).ok).toBe(true);
    for (const info of await Promise.all([a.finished, b.finished])) {
      expect(info.reason).toBe('error');
      expect(info.error).toBeInstanceOf(EngineError);
      expect(info.error!.message).toContain('decoder bug');
    }
    expect(logs.some((line) => line.includes('engine loop failed'))).toBe(true);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);

    broken = false;
    const c = sink();
    expect(engine.add(spec('third'), c).ok).toBe(true);
    expect((await c.finished).reason).toBe('length');
  });

  it('reports its state in stats(): cache usage, queue lengths and counters, as plain data', async () => {
    const backend = new TestBackend();
    const kv = new KvCacheManager([{ name: 'attention', blockSize: 4, numBlocks: 64 }], { prefixCaching: true });
    await backend.allocateCache({ numBlocks: 64, blockSize: 4, precision: 'f32' });
    const engine = new Engine({
      backend,
      kv,
      scheduler: { maxNumSeqs: 1, maxNumBatchedTokens: 64, policy: 'fcfs' },
      decoder: new ByteTokenizer(),
      eosTokenIds: [],
    });
    const idle = engine.stats();
    expect(idle).toEqual({ kv: { pools: kv.stats(), blockSize: 4, prefixCaching: true }, running: 0, waiting: 0, preemptions: 0, steps: 0, speculative: { drafted: 0, accepted: 0 }, computedTokens: 0, forks: 0 });
    const [a, b] = [sink(), sink()];
    expect(engine.add(spec('first'), a).ok).toBe(true);
    expect(engine.add(spec('second'), b).ok).toBe(true);
    // Both queued until the loop's first step (next turn); maxNumSeqs 1 runs them one after the other.
    expect(engine.stats()).toMatchObject({ running: 0, waiting: 2, steps: 0 });
    await Promise.all([a.finished, b.finished]);
    await engine.whenIdle();
    const done = engine.stats();
    // 'first' and 'second' (5 and 6 tokens) each take a prefill step and 3 decode steps.
    expect(done).toMatchObject({ running: 0, waiting: 0, preemptions: 0, steps: 8 });
    expect(done.kv.pools[0]!.usedBlocks).toBe(0);
    expect(idle.kv.pools).not.toBe(done.kv.pools); // a snapshot, not a live view
  });
});
