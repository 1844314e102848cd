/**
 * Scheduler: one step's plan, i.e. which tokens of which requests run now.
 *
 * Token-budget continuous batching with chunked prefill, in two phases:
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
 * Capacity problems are values (KvError, FailedRequest); a request state
 * transition that cannot happen throws EngineError (see request.ts).
 */

import { NO_PREFIX_HIT, type KvCacheManager, type KvError } from './kv/kv-cache-manager.js';
import type { Request } from './request.js';

export type SchedulingPolicy = 'fcfs' | 'priority';

export interface SchedulerConfig {
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly policy: SchedulingPolicy;
  /**
   * The model attends both ways (ModelShape.wholeSequences): a prompt is
   * scheduled whole or not at all, with no prefix hit (embedding.ts, E3).
   * The engine sets it from the backend's shape.
   */
  readonly wholeSequences?: boolean;
  /**
   * Speculative decoding (speculative.ts, S7): a step verifies draft tokens
   * only while its rows, one per running request plus the draft tokens, stay
   * within this many. A step of few rows reads each weight once for all of
   * them, so verifying costs little; a large batch is compute-bound and gains
   * nothing. Default DEFAULT_SPECULATIVE_ROWS.
   */
  readonly speculativeRows?: number;
}

/** scheduler.speculativeRows unless set: steps of up to 8 rows cost about 1.1-1.4x a one-row step on a 0.6B model (bench/few-rows). */
export const DEFAULT_SPECULATIVE_ROWS = 8;

export interface ScheduledRequest {
  readonly request: Request;
  /** Tokens of this request computed in this step, starting at request.numComputed (draft tokens included). */
  readonly numTokens: number;
  /**
   * Of numTokens, the last ones that are draft tokens (request.draft's first
   * ones), verified in this step; absent or 0 without speculation.
   */
  readonly numDraft?: number;
  /** Whether this step completes every known token, so a new one is sampled (never for an embedding request). */
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

/** The plan under construction, with the token budget left. */
interface Draft {
  readonly scheduled: ScheduledRequest[];
  readonly preempted: Request[];
  readonly failed: FailedRequest[];
  budget: number;
  /** Draft tokens this step may still verify (S7). */
  draftRows: number;
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

  /** Queues a request ahead of every waiting one (a parallel-sampling leader's successor takes its place). */
  addFirst(request: Request): void {
    this.waiting.unshift(request);
  }

  /**
   * Whether a request may join `running` without admission (a fork of a
   * running request: parallel-sampling.ts), i.e. maxNumSeqs leaves room.
   */
  get hasRoomToAdopt(): boolean {
    return this.running.length < this.config.maxNumSeqs;
  }

  /** Runs a request whose blocks the caller already allocated (a fork), in victim order like any admitted one. */
  adopt(request: Request): void {
    request.transition('running');
    this.insertRunning(request);
  }

  /** Forgets a finished request. The caller frees its blocks. */
  remove(request: Request): void {
    removeFrom(this.waiting, request);
    removeFrom(this.running, request);
  }

  /** One step's plan: running requests first, then admission (skipped in a step that preempted). */
  schedule(): StepPlan {
    const draftRows = Math.max(0, (this.config.speculativeRows ?? DEFAULT_SPECULATIVE_ROWS) - this.running.length);
    const draft: Draft = { scheduled: [], preempted: [], failed: [], budget: this.config.maxNumBatchedTokens, draftRows };
    this.scheduleRunning(draft);
    // Admitting in a step that had to preempt would only thrash.
    if (draft.preempted.length === 0) this.admitWaiting(draft);
    const { scheduled, preempted, failed, budget } = draft;
    return { scheduled, preempted, failed, numTokens: this.config.maxNumBatchedTokens - budget };
  }

  /**
   * Phase 1. Walks `running` in place: a request that leaves it (failed, or
   * preempted as its own victim) was at index i and victims are taken from the
   * end, so the requests not visited yet are always running[i..].
   */
  private scheduleRunning(draft: Draft): void {
    const running = this.running;
    for (let i = 0; i < running.length; ) {
      if (this.growRunning(running[i]!, draft, running.length - i - 1)) i++;
    }
  }

  /**
   * Schedules a running request's pending tokens (as many as the budget
   * allows), preempting from the end of `running` until its blocks fit.
   * Returns whether the request is still running. `later`: running requests
   * after it, for each of which a draft leaves a token of the budget and a free block.
   */
  private growRunning(request: Request, draft: Draft, later: number): boolean {
    const numTokens = Math.min(request.numPending, draft.budget);
    if (numTokens <= 0) return true;
    // Never part of a whole sequence (E3; admission already ran it whole, so this does not happen).
    if (this.config.wholeSequences === true && numTokens < request.numPending) return true;
    // A decode may verify draft tokens with it, as far as the budget allows (they count in it),
    // leaving a token for each running request after it: a draft never starves another's decode;
    // and as far as the step's speculative rows allow (S7).
    const numDraft = request.numPending === 1 ? Math.max(0, Math.min(request.draft.length, draft.budget - 1 - later, draft.draftRows)) : 0;
    if (numDraft > 0 && this.draftFits(request, request.numComputed + numTokens + numDraft, later)) {
      // Speculation never preempts (S4): without room for the draft, the request runs without it.
      const grown = this.kv.appendSlots(request.id, request.numComputed + numTokens + numDraft);
      if (grown.ok) {
        draft.scheduled.push({ request, numTokens: numTokens + numDraft, samples: true, numDraft });
        draft.budget -= numTokens + numDraft;
        draft.draftRows -= numDraft;
        return true;
      }
    }
    for (;;) {
      const grown = this.kv.appendSlots(request.id, request.numComputed + numTokens);
      if (grown.ok) {
        draft.scheduled.push(this.entry(request, numTokens));
        draft.budget -= numTokens;
        return true;
      }
      if (grown.error.kind !== 'NoCapacity') {
        this.drop(request);
        draft.failed.push({ request, reason: 'error', message: describe(grown.error) });
        return false;
      }
      if (this.running.length === 1) {
        // The whole cache is not enough: it is this request's context limit.
        this.drop(request);
        draft.failed.push({ request, reason: 'length', message: `the KV cache cannot hold ${request.numComputed + numTokens} tokens` });
        return false;
      }
      // The victim is the last running request: not visited yet (or this one),
      // so nothing of it is in `scheduled` to undo.
      const victim = this.running[this.running.length - 1]!;
      this.preempt(victim);
      draft.preempted.push(victim);
      if (victim === request) return false;
    }
  }

  /**
   * Whether growing `request` to `numTokens` for a draft leaves a free block
   * for each of the `later` running requests (a decode needs at most one), so
   * that no draft causes a preemption (S4). Speculation runs on attention-only
   * caches (K7), so the attention pool is the only one.
   */
  private draftFits(request: Request, numTokens: number, later: number): boolean {
    const needed = this.kv.blocksFor(0, numTokens) - this.kv.blockTable(request.id).length;
    return needed <= 0 || needed + later <= this.kv.pools[0]!.numFree;
  }

  /** Phase 2: waiting requests in policy order, while maxNumSeqs, the budget and the cache allow. */
  private admitWaiting(draft: Draft): void {
    while (this.waiting.length > 0 && this.running.length < this.config.maxNumSeqs && draft.budget > 0) {
      const request = this.nextWaiting();
      // Pooling over every token (or the first) needs them all computed here (embedding.ts, E1).
      const pooling = request.spec.embedding?.pooling;
      const whole = this.config.wholeSequences === true;
      const hit = !whole && (pooling === undefined || pooling === 'last') ? this.kv.findPrefix(request.tokens) : NO_PREFIX_HIT;
      // A bidirectional model's prompt goes in whole (E3): it waits for a step with room for all of it.
      // (The engine refuses one longer than maxNumBatchedTokens, so some step has that room.)
      if (whole && request.tokens.length > draft.budget) return;
      const numTokens = Math.min(request.tokens.length - hit.numTokens, draft.budget);
      const admitted = this.kv.allocate(request.id, hit, hit.numTokens + numTokens);
      if (!admitted.ok) {
        // Admission stops at the first request (in policy order) that does not fit: running requests will free room.
        if (admitted.error.kind === 'NoCapacity' && this.running.length > 0) return;
        // Nothing runs, so nothing will free room: this request can never fit.
        removeFrom(this.waiting, request);
        draft.failed.push({ request, reason: this.kv.fitsEmpty(request.tokens.length) ? 'error' : 'length', message: describe(admitted.error) });
        continue;
      }
      removeFrom(this.waiting, request);
      request.transition('running');
      request.numComputed = hit.numTokens;
      // A re-admitted request may hit its own generated tokens; only prompt tokens count as cached prompt.
      request.numCachedPrefix = Math.min(hit.numTokens, request.numPromptTokens);
      this.insertRunning(request);
      draft.scheduled.push(this.entry(request, numTokens));
      draft.budget -= numTokens;
    }
  }

  private entry(request: Request, numTokens: number): ScheduledRequest {
    const completes = request.numComputed + numTokens === request.tokens.length;
    return { request, numTokens, samples: completes && request.spec.embedding === undefined };
  }

  /** Takes a failing running request out, freeing its blocks now so admission below can use them. */
  private drop(request: Request): void {
    this.kv.free(request.id);
    removeFrom(this.running, request);
  }

  /** Frees the victim whole (every pool) and puts it at the front of the queue. */
  private preempt(victim: Request): void {
    victim.preempt(); // first: an impossible transition throws before anything moved
    this.kv.free(victim.id);
    removeFrom(this.running, victim);
    this.waiting.unshift(victim);
    this.preemptions++;
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

export function describe(error: KvError): string {
  switch (error.kind) {
    case 'NoCapacity':
      return `the ${error.pool} pool needs ${error.needed} blocks but has ${error.free} free`;
    case 'UnknownRequest':
      return `request ${error.requestId} holds no blocks`;
    case 'AlreadyAllocated':
      return `request ${error.requestId} already holds blocks`;
    case 'NotTruncatable':
      return `the ${error.pool} pool holds recurrent state, which cannot be rolled back`;
    case 'SharedBlock':
      return `request ${error.requestId} shares block ${error.block}, so it cannot rewrite it`;
    case 'BeyondEnd':
      return `request ${error.requestId} holds fewer than ${error.numTokens} tokens`;
  }
}
