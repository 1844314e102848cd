/**
 * Scheduler: one step's plan, i.e. which tokens of which requests run now.
 *
 * Token-budget continuous batching with chunked prefill:
 *  1. Running requests first (oldest / highest priority first), each with as
 *     many pending tokens as the budget allows (1 for a decode). If the cache
 *     cannot grow one, the victim (lowest priority, latest arrival) is
 *     preempted by recompute: freed whole in every pool and put back at the
 *     front of the queue. A request that cannot grow even with the cache to
 *     itself ends with 'length' (the cache is its context limit).
 *  2. Then waiting requests, in policy order, while maxNumSeqs, the budget and
 *     the cache allow — but none in a step that preempted (admitting then
 *     would only thrash). FCFS stops at the first request that does not fit.
 *
 * Progress: the oldest running request is never a victim while another is
 * running, so every step either runs it or ends it; nothing can livelock.
 */

import type { KvCacheManager, KvError } from './kv/kv-cache-manager.js';
import type { Request } from './request.js';
import type { Result } from './result.js';

export type SchedulingPolicy = 'fcfs' | 'priority';

export interface SchedulerConfig {
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly policy: SchedulingPolicy;
}

export interface ScheduledRequest {
  readonly request: Request;
  /** Tokens of this request computed in this step, starting at request.numComputed. */
  readonly numTokens: number;
  /** Whether this step completes every known token, so a new one is sampled. */
  readonly samples: boolean;
}

export interface FailedRequest {
  readonly request: Request;
  readonly reason: 'length' | 'error';
  readonly message: string;
}

export interface StepPlan {
  readonly scheduled: ScheduledRequest[];
  readonly preempted: Request[];
  readonly failed: FailedRequest[];
  readonly numTokens: number;
}

export class Scheduler {
  readonly config: SchedulerConfig;
  private readonly kv: KvCacheManager;
  /** Waiting and preempted requests; index 0 is next under FCFS. */
  readonly waiting: Request[] = [];
  /** Admitted requests, kept in victim order (the last is preempted first). */
  readonly running: Request[] = [];
  preemptions = 0;

  constructor(config: SchedulerConfig, kv: KvCacheManager) {
    this.config = config;
    this.kv = kv;
  }

  get hasWork(): boolean {
    return this.waiting.length > 0 || this.running.length > 0;
  }

  add(request: Request): void {
    this.waiting.push(request);
  }

  /** Forgets a finished request. The caller frees its blocks. */
  remove(request: Request): void {
    removeFrom(this.waiting, request);
    removeFrom(this.running, request);
  }

  schedule(): StepPlan {
    // In running order; an entry is taken back only if its request is preempted.
    const scheduled: ScheduledRequest[] = [];
    const preempted: Request[] = [];
    const failed: FailedRequest[] = [];
    let budget = this.config.maxNumBatchedTokens;

    // Walks `running` in place: a request that leaves it (dropped, or preempted
    // as its own victim) is at index i, victims are taken from the end, so the
    // requests not visited yet are always running[i..].
    const running = this.running;
    for (let i = 0; i < running.length; ) {
      const request = running[i]!;
      const numTokens = Math.min(request.numPending, budget);
      let stays = true;
      for (;;) {
        if (numTokens <= 0) break;
        const grown = this.kv.appendSlots(request.id, request.numComputed + numTokens);
        if (grown.ok) {
          scheduled.push(this.entry(request, numTokens));
          budget -= numTokens;
          break;
        }
        if (grown.error.kind !== 'NoCapacity') {
          this.drop(request);
          failed.push({ request, reason: 'error', message: describe(grown.error) });
          stays = false;
          break;
        }
        if (running.length === 1) {
          this.drop(request);
          failed.push({ request, reason: 'length', message: `the KV cache cannot hold ${request.numComputed + numTokens} tokens` });
          stays = false;
          break;
        }
        // The victim is the last running request: not visited yet (or this one), so
        // nothing of it is in `scheduled` to undo.
        const victim = running[running.length - 1]!;
        const moved = this.preempt(victim);
        if (!moved.ok) failed.push({ request: victim, reason: 'error', message: moved.error });
        else preempted.push(victim);
        if (victim === request) {
          stays = false;
          break;
        }
      }
      if (stays) i++;
    }

    if (preempted.length === 0) {
      while (this.waiting.length > 0 && this.running.length < this.config.maxNumSeqs && budget > 0) {
        const request = this.nextWaiting();
        const hit = this.kv.findPrefix(request.tokens);
        const numTokens = Math.min(request.tokens.length - hit.numTokens, budget);
        const admitted = this.kv.allocate(request.id, hit, hit.numTokens + numTokens);
        if (!admitted.ok) {
          if (admitted.error.kind === 'NoCapacity' && this.running.length > 0) break; // wait for room
          // Nothing runs, so nothing will free room: this request can never fit.
          removeFrom(this.waiting, request);
          failed.push({ request, reason: this.kv.fitsEmpty(request.tokens.length) ? 'error' : 'length', message: describe(admitted.error) });
          continue;
        }
        removeFrom(this.waiting, request);
        const moved = request.transition('running');
        if (!moved.ok) {
          this.kv.free(request.id);
          failed.push({ request, reason: 'error', message: moved.error });
          continue;
        }
        request.numComputed = hit.numTokens;
        // A re-admitted request may hit its own generated tokens; only prompt tokens count as cached prompt.
        request.numCachedPrefix = Math.min(hit.numTokens, request.numPromptTokens);
        this.insertRunning(request);
        scheduled.push(this.entry(request, numTokens));
        budget -= numTokens;
      }
    }

    return { scheduled, preempted, failed, numTokens: this.config.maxNumBatchedTokens - budget };
  }

  private entry(request: Request, numTokens: number): ScheduledRequest {
    return { request, numTokens, samples: request.numComputed + numTokens === request.tokens.length };
  }

  /** Takes a failing running request out, freeing its blocks now so admission below can use them. */
  private drop(request: Request): void {
    this.kv.free(request.id);
    removeFrom(this.running, request);
  }

  /** Frees the victim whole (every pool) and puts it at the front of the queue. */
  private preempt(victim: Request): Result<void, string> {
    this.kv.free(victim.id);
    removeFrom(this.running, victim);
    const moved = victim.preempt();
    if (!moved.ok) return moved;
    this.waiting.unshift(victim);
    this.preemptions++;
    return moved;
  }

  private nextWaiting(): Request {
    if (this.config.policy === 'fcfs') return this.waiting[0]!;
    let best = this.waiting[0]!;
    for (const request of this.waiting) if (comesFirst(request, best)) best = request;
    return best;
  }

  /** Keeps `running` sorted so that its last element is the next victim. */
  private insertRunning(request: Request): void {
    let at = this.running.length;
    const byPriority = this.config.policy === 'priority';
    while (at > 0 && precedes(request, this.running[at - 1]!, byPriority)) at--;
    this.running.splice(at, 0, request);
  }
}

/** Order of running requests: higher priority (under that policy), then earlier arrival. */
function precedes(a: Request, b: Request, byPriority: boolean): boolean {
  if (byPriority && a.spec.priority !== b.spec.priority) return a.spec.priority > b.spec.priority;
  return a.arrival < b.arrival;
}

/** Priority queue order: higher priority, then earlier arrival. */
function comesFirst(a: Request, b: Request): boolean {
  return precedes(a, b, true);
}

function removeFrom(list: Request[], request: Request): void {
  const at = list.indexOf(request);
  if (at !== -1) list.splice(at, 1);
}

function describe(error: KvError): string {
  switch (error.kind) {
    case 'NoCapacity':
      return `the ${error.pool} pool needs ${error.needed} blocks but has ${error.free} free`;
    case 'UnknownRequest':
      return `request ${error.requestId} holds no blocks`;
    case 'AlreadyAllocated':
      return `request ${error.requestId} already holds blocks`;
  }
}
