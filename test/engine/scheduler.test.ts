/**
 * The scheduler alone, over a real KV cache manager: which tokens of which
 * requests one step runs, in its two phases (running requests, then admission).
 * `advance` plays the engine's part between steps.
 */
import { describe, expect, it } from 'vitest';
import { KvCacheManager } from '../../src/engine/kv/kv-cache-manager.js';
import { Request, type RequestSpec } from '../../src/engine/request.js';
import { Scheduler, type SchedulerConfig, type StepPlan } from '../../src/engine/scheduler.js';
import { EngineError } from '../../src/errors.js';
import { GREEDY } from '../../src/sampling/params.js';

const BLOCK = 4;
let nextId = 1;

function request(promptLength: number, priority = 0): Request {
  const spec: RequestSpec = {
    promptTokenIds: Array.from({ length: promptLength }, (_, i) => 10 + i),
    sampling: GREEDY,
    stop: { maxTokens: 100, stopTokenIds: [], stopStrings: [], ignoreEos: true },
    priority,
  };
  const id = nextId++;
  return new Request(id, id, spec);
}

function scheduler(usableBlocks: number, config: Partial<SchedulerConfig> = {}): { scheduler: Scheduler; kv: KvCacheManager } {
  const kv = new KvCacheManager([{ name: 'attention', blockSize: BLOCK, numBlocks: usableBlocks + 1 }], { prefixCaching: false });
  return { scheduler: new Scheduler({ maxNumSeqs: 8, maxNumBatchedTokens: 64, policy: 'fcfs', ...config }, kv), kv };
}

/** What the engine does after a step: the scheduled tokens are computed, and each sampling request gets a token. */
function advance(plan: StepPlan): void {
  for (const { request, numTokens, samples } of plan.scheduled) {
    request.numComputed += numTokens;
    if (samples) request.tokens.push(1);
  }
}

const summary = (plan: StepPlan): [number, number, boolean][] => plan.scheduled.map((s) => [s.request.id, s.numTokens, s.samples]);

describe('Scheduler', () => {
  it('serves running requests before admitting, chunking prompts to the token budget', () => {
    const { scheduler: s } = scheduler(100, { maxNumBatchedTokens: 8 });
    const a = request(10);
    const b = request(10);
    s.add(a);
    s.add(b);
    const first = s.schedule();
    expect(summary(first)).toEqual([[a.id, 8, false]]); // the budget ends with a's first chunk
    expect(first.numTokens).toBe(8);
    advance(first);
    const second = s.schedule();
    expect(summary(second)).toEqual([
      [a.id, 2, true], // phase 1: the rest of a's prompt
      [b.id, 6, false], // phase 2: b admitted with what is left
    ]);
    advance(second);
    expect(summary(s.schedule())).toEqual([
      [a.id, 1, true],
      [b.id, 4, true],
    ]);
    expect(s.running).toEqual([a, b]);
  });

  it('admits no more than maxNumSeqs', () => {
    const { scheduler: s } = scheduler(100, { maxNumSeqs: 2 });
    const requests = [request(3), request(3), request(3)];
    for (const r of requests) s.add(r);
    expect(summary(s.schedule()).map(([id]) => id)).toEqual([requests[0]!.id, requests[1]!.id]);
    expect(s.waiting).toEqual([requests[2]]);
  });

  it('preempts the latest arrival whole when a running request cannot grow, and admits nothing in that step', () => {
    const { scheduler: s, kv } = scheduler(4);
    const a = request(8);
    const b = request(8);
    const c = request(1);
    s.add(a);
    s.add(b);
    advance(s.schedule()); // both admitted: the cache is full
    s.add(c);
    const plan = s.schedule();
    expect(plan.preempted).toEqual([b]);
    expect(summary(plan)).toEqual([[a.id, 1, true]]);
    expect(s.waiting).toEqual([b, c]); // the victim goes first
    expect(b).toMatchObject({ status: 'preempted', numComputed: 0 });
    expect(kv.blockTable(b.id)).toEqual([]);
    expect(s.preemptions).toBe(1);
  });

  it('a lone request that the whole cache cannot hold ends with length', () => {
    const { scheduler: s, kv } = scheduler(2);
    const a = request(8);
    s.add(a);
    advance(s.schedule());
    const plan = s.schedule();
    expect(plan.failed).toMatchObject([{ request: a, reason: 'length' }]);
    expect(s.running).toEqual([]);
    expect(kv.stats()[0]!.usedBlocks).toBe(0);
  });

  it('a waiting request that cannot fit an empty cache fails with length; one that fits waits for room', () => {
    const { scheduler: s } = scheduler(3);
    const huge = request(20);
    s.add(huge);
    expect(s.schedule().failed).toMatchObject([{ request: huge, reason: 'length' }]);
    const a = request(8);
    const b = request(8);
    s.add(a);
    s.add(b);
    const plan = s.schedule();
    expect(summary(plan).map(([id]) => id)).toEqual([a.id]);
    expect(plan.failed).toEqual([]);
    expect(s.waiting).toEqual([b]); // FCFS: b waits for a's blocks
  });

  it('under the priority policy admits the highest priority first and preempts the lowest', () => {
    const { scheduler: s } = scheduler(4, { policy: 'priority' });
    const low = request(8, 0);
    const high = request(8, 5);
    s.add(low);
    s.add(high);
    const first = s.schedule();
    expect(summary(first).map(([id]) => id)).toEqual([high.id, low.id]);
    advance(first);
    expect(s.schedule().preempted).toEqual([low]);
  });

  it('an impossible state (a finished request still queued) throws EngineError for the engine loop to handle', () => {
    const { scheduler: s } = scheduler(10);
    const a = request(3);
    a.finish('aborted');
    s.add(a);
    expect(() => s.schedule()).toThrow(EngineError);
  });
});

describe('Scheduler with draft tokens (speculative decoding)', () => {
  it('schedules a decode with its draft, within the token budget', () => {
    const { scheduler: s } = scheduler(100, { maxNumBatchedTokens: 6 });
    const a = request(4);
    const b = request(4);
    s.add(a);
    s.add(b);
    advance(s.schedule()); // both prompts, 8 tokens: a whole, b in part
    advance(s.schedule());
    a.draft = [7, 8, 9, 10, 11];
    const plan = s.schedule();
    // a: its pending token and 4 of the draft (budget 6, b needs 1); b decodes.
    expect(plan.scheduled.map((e) => [e.request.id, e.numTokens, e.numDraft ?? 0])).toEqual([
      [a.id, 5, 4],
      [b.id, 1, 0],
    ]);
    expect(plan.numTokens).toBe(6);
  });

  it('verifies drafts only while the step stays within speculativeRows rows (S7)', () => {
    const rows = (speculativeRows: number | undefined, running: number, drafts: number[][]) => {
      const { scheduler: s } = scheduler(200, { maxNumSeqs: 16, maxNumBatchedTokens: 256, ...(speculativeRows !== undefined && { speculativeRows }) });
      const requests = Array.from({ length: running }, () => request(4));
      for (const r of requests) s.add(r);
      advance(s.schedule()); // every prompt
      requests.forEach((r, i) => (r.draft = drafts[i] ?? []));
      return s.schedule().scheduled.map((e) => e.numDraft ?? 0);
    };
    // Default 8: 2 decodes leave 6 draft rows, taken in order; 8 decodes leave none.
    expect(rows(undefined, 2, [[1, 2, 3, 4], [1, 2, 3, 4]])).toEqual([4, 2]);
    expect(rows(undefined, 8, Array.from({ length: 8 }, () => [1, 2, 3]))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    // Raised, a large batch verifies every draft; at 1, none ever.
    expect(rows(64, 8, Array.from({ length: 8 }, () => [1, 2, 3]))).toEqual([3, 3, 3, 3, 3, 3, 3, 3]);
    expect(rows(1, 1, [[1, 2, 3]])).toEqual([0]);
  });

  it('drops a draft rather than preempting anyone (S4)', () => {
    // 4 blocks of 4: a and b hold 2 each once their 8-token prompts are in, and each decode fits its last block.
    const { scheduler: s, kv } = scheduler(4);
    const a = request(7);
    const b = request(7);
    s.add(a);
    s.add(b);
    advance(s.schedule());
    expect(kv.stats()[0]!.freeBlocks).toBe(0);
    a.draft = [1, 2, 3]; // would need a third block for a
    const plan = s.schedule();
    expect(plan.preempted).toEqual([]);
    expect(plan.scheduled.map((e) => [e.request.id, e.numTokens, e.numDraft ?? 0])).toEqual([
      [a.id, 1, 0],
      [b.id, 1, 0],
    ]);
  });
});
