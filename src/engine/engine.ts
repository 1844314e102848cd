/**
 * Engine: the loop. Each step is: plan (the scheduler's, with the requests it
 * preempted or failed), execute (the batch on the backend; meanwhile each
 * token choice prepares), advance (tokens computed, full blocks cached),
 * choose (each sampling request's next token: token-choice.ts) and emit
 * (detokenize, stop rules, the request's sink).
 *
 * Capacity problems (a full cache, a prompt that cannot be admitted) are
 * values, never exceptions: they become a finished request (with a typed
 * error) and a log line. A backend failure fails the requests of that step
 * only; the loop keeps serving the rest. What cannot happen in a correct engine
 * (an illegal request state transition) throws EngineError, and the loop's
 * handler fails the live requests instead of the process.
 * Aborts are applied at once (the request's blocks are freed; no allocation
 * happens until the current step returns), and the output an aborted request
 * would have got from a step in flight is discarded.
 */

import type { Backend, StepResult } from '../backends/backend.js';
import { BackendError, EngineError, GrammarDeadEndError } from '../errors.js';
import type { SampledToken } from '../sampling/sampler.js';
import { buildBatch } from './batch.js';
import { PooledEmbedding, pooledOffsets } from './embedding.js';
import type { KvCacheManager, PoolStats } from './kv/kv-cache-manager.js';
import { IncrementalDetokenizer, type TokenDecoder } from './detokenizer.js';
import { StopStringMatcher } from './stop-strings.js';
import { Request, type FinishReason, type RequestSpec, type StopCriteria } from './request.js';
import { err, ok, type Result } from './result.js';
import { Scheduler, describe, type SchedulerConfig, type StepPlan } from './scheduler.js';
import { PendingCopies, choiceSpecs } from './parallel-sampling.js';
import { DraftPace, lookupDraft, type SpeculativeCounts } from './speculative.js';
import { TokenChoice, resultProblem } from './token-choice.js';

/** What one step produced for one request. */
export interface RequestDelta {
  readonly text: string;
  readonly tokenIds: readonly number[];
  readonly logprobs?: readonly SampledToken[];
}

export interface FinishInfo {
  readonly reason: FinishReason;
  /** Set for 'error' and 'aborted'. */
  readonly error?: Error;
  /** Text held back (stop-string look-ahead) that is released at the end. */
  readonly finalText: string;
  /** Prompt tokens served from the prefix cache at the request's last admission. */
  readonly cachedPromptTokens: number;
  /** An embedding request that finished with 'stop': its pooled vector (not normalised). */
  readonly embedding?: Float32Array;
  /** Speculative decoding's draft tokens verified and accepted, for a request that speculated (speculative.ts). */
  readonly speculative?: SpeculativeCounts;
}

/** Where a request's outputs go. Called synchronously from the loop; must not throw. */
export interface RequestSink {
  onDelta(delta: RequestDelta): void;
  onFinish(info: FinishInfo): void;
}

export interface StepInfo {
  readonly step: number;
  readonly scheduledRequests: number;
  readonly scheduledTokens: number;
  readonly preempted: number;
  readonly running: number;
  readonly waiting: number;
  readonly durationMs: number;
}

/** A snapshot of the engine's state for the pipeline's stats(); plain data, no live references. */
export interface EngineStats {
  /** The KV cache: each pool's block counts, the attention pool's block size, whether prefix caching is on. */
  readonly kv: { readonly pools: PoolStats[]; readonly blockSize: number; readonly prefixCaching: boolean };
  /** Requests admitted and not finished (their blocks are in the cache). */
  readonly running: number;
  /** Requests queued for admission, preempted ones included. */
  readonly waiting: number;
  /** Preemptions since the engine started (a request preempted twice counts twice). */
  readonly preemptions: number;
  /** Steps completed (a step whose backend call failed is not counted). */
  readonly steps: number;
  /** Speculative decoding since the engine started: draft tokens verified, and accepted. */
  readonly speculative: SpeculativeCounts;
  /** Tokens the backend computed since the engine started (prompt and generated tokens, draft tokens included). */
  readonly computedTokens: number;
  /** Parallel-sampling choices that shared their leader's prompt by a fork instead of computing it (parallel-sampling.ts). */
  readonly forks: number;
}

export interface EngineObserver {
  onStep?(info: StepInfo): void;
  onPreempt?(requestId: number): void;
  onLog?(message: string): void;
}

export type AddError =
  | { readonly kind: 'PromptTooLong'; readonly message: string }
  | { readonly kind: 'Closed'; readonly message: string }
  | { readonly kind: 'CannotEmbed'; readonly message: string };

export interface EngineOptions {
  readonly backend: Backend;
  readonly kv: KvCacheManager;
  readonly scheduler: SchedulerConfig;
  readonly decoder: TokenDecoder;
  readonly eosTokenIds: readonly number[];
  readonly observer?: EngineObserver;
}

/**
 * A request with the engine's own state for it. The engine creates every
 * request the scheduler sees, so the step loop reaches this state from a plan
 * entry directly, without a lookup per request per step.
 */
class LiveRequest extends Request {
  readonly sink: RequestSink;
  /** Picks each next token: sampling, the grammar's mask, the backend's argmax. */
  readonly choice: TokenChoice;
  readonly detokenizer: IncrementalDetokenizer;
  readonly stops: StopStringMatcher;
  // Stop rules folded into two fields, so a decode step reads no other object for them.
  /** Whether a sampled token can end the request (stop token ids, or EOS not ignored). */
  readonly checksStopTokens: boolean;
  /** Token count that ends it with 'length': the prompt plus maxTokens, or the model's context. */
  readonly lengthLimit: number;
  /** An embedding request's pooling (embedding.ts); undefined for the others. */
  readonly pooled: PooledEmbedding | undefined;
  /**
   * Whether it drafts tokens (speculative decoding): asked for, unguided (a grammar's mask is
   * filled for one row a step, not for each verified row), on a cache that can roll back (K7).
   * Greedy requests verify by argmax (S1), sampled ones by the rejection rule (S6).
   */
  readonly speculates: boolean;
  /** n > 1 sampling: the choices waiting to fork from this one once its prompt is computed (parallel-sampling.ts). */
  followers: LiveRequest[] = [];
  /** n > 1 sampling: the choice this one waits on to fork from; undefined once forked or on its own. */
  leader: LiveRequest | undefined;
  /** The followers forked in the step in flight: they take their first token from this request's row of it. */
  forkedNow: LiveRequest[] | undefined;

  constructor(id: number, spec: RequestSpec, sink: RequestSink, decoder: TokenDecoder, maxContextLength: number, eos: ReadonlySet<number>, vocabSize: number, hiddenSize: number, truncatable: boolean) {
    super(id, id, spec);
    this.sink = sink;
    this.choice = new TokenChoice(spec, eos, vocabSize);
    this.detokenizer = new IncrementalDetokenizer(decoder, spec.promptTokenIds, spec.skipSpecialTokens ?? true);
    this.stops = new StopStringMatcher(spec.stop.stopStrings);
    this.checksStopTokens = spec.stop.stopTokenIds.length > 0 || !spec.stop.ignoreEos;
    this.lengthLimit = Math.min(spec.promptTokenIds.length + spec.stop.maxTokens, maxContextLength);
    this.pooled = spec.embedding === undefined ? undefined : new PooledEmbedding(spec.embedding.pooling, hiddenSize);
    this.speculates = spec.speculative !== undefined && spec.grammar === undefined && truncatable;
  }
}

export class Engine {
  private readonly scheduler: Scheduler;
  private readonly kv: KvCacheManager;
  private readonly backend: Backend;
  private readonly decoder: TokenDecoder;
  private readonly eos: ReadonlySet<number>;
  private readonly observer: EngineObserver;
  /** Requests not finished yet; a request leaves it exactly when it finishes. */
  private readonly live = new Map<number, LiveRequest>();
  private nextId = 1;
  private looping = false;
  private closed = false;
  private steps = 0;
  private drafted = 0;
  private accepted = 0;
  private computedTokens = 0;
  private forks = 0;
  /** Block copies of the forks made after the last step, for the next one (P3). */
  private readonly pendingCopies = new PendingCopies();
  /** The masks-ready flag of the batch in flight (StepBatch.sampling.masksReady), set once its masks are filled. */
  private masksReady: Int32Array | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(options: EngineOptions) {
    this.backend = options.backend;
    this.kv = options.kv;
    this.scheduler = new Scheduler({ ...options.scheduler, wholeSequences: options.backend.shape.wholeSequences === true }, options.kv);
    this.decoder = options.decoder;
    this.eos = new Set(options.eosTokenIds);
    this.observer = options.observer ?? {};
  }

  /** Cache usage per pool, queue lengths and counters, as of now. */
  stats(): EngineStats {
    const { kv, scheduler } = this;
    return {
      kv: { pools: kv.stats(), blockSize: kv.blockSize, prefixCaching: kv.prefixCaching },
      running: scheduler.running.length,
      waiting: scheduler.waiting.length,
      preemptions: scheduler.preemptions,
      steps: this.steps,
      speculative: { drafted: this.drafted, accepted: this.accepted },
      computedTokens: this.computedTokens,
      forks: this.forks,
    };
  }

  /** Queues a request. Its outputs go to `sink` until exactly one onFinish. */
  add(spec: RequestSpec, sink: RequestSink): Result<number, AddError> {
    const refused = this.refusal(spec);
    if (refused !== undefined) return err(refused);
    const request = this.create(spec, sink);
    this.scheduler.add(request);
    this.kick();
    return ok(request.id);
  }

  /**
   * Queues n = sinks.length choices of one request (parallel-sampling.ts):
   * choice i samples with seed + i and reports to sinks[i]; the prompt is
   * computed once and forked into the others. Returns their ids, in order;
   * each may be aborted on its own.
   */
  addChoices(spec: RequestSpec, sinks: readonly RequestSink[]): Result<number[], AddError> {
    const refused = this.refusal(spec);
    if (refused !== undefined) return err(refused);
    if (spec.embedding !== undefined || sinks.length === 0) throw new EngineError('addChoices takes one or more sinks of a generation request');
    const specs = choiceSpecs(spec, sinks.length);
    const [leader, ...followers] = specs.map((choice, i) => this.create(choice, sinks[i]!));
    this.scheduler.add(leader!);
    // A hybrid model's recurrent state is not copied by a fork, nor are blocks by a backend that cannot: its choices run on their own (P2).
    if (this.kv.specs.length > 1 || this.backend.shape.copiesBlocks === false) for (const follower of followers) this.scheduler.add(follower);
    else {
      leader!.followers = followers;
      for (const follower of followers) follower.leader = leader;
    }
    this.kick();
    return ok([leader!.id, ...followers.map((follower) => follower.id)]);
  }

  /** Why a request cannot be queued at all, or undefined. */
  private refusal(spec: RequestSpec): AddError | undefined {
    if (this.closed) return { kind: 'Closed', message: 'the engine is closed' };
    const prompt = spec.promptTokenIds.length;
    const maxContext = this.backend.shape.maxContextLength;
    if (prompt === 0) return { kind: 'PromptTooLong', message: 'the prompt has no tokens' };
    if (spec.embedding !== undefined && this.backend.shape.hiddenSize === undefined)
      return { kind: 'CannotEmbed', message: 'this backend cannot return hidden states (its shape has no hiddenSize), so it cannot embed' };
    const types = spec.embedding?.tokenTypeIds;
    if (types !== undefined) {
      const rows = this.backend.shape.tokenTypes;
      if (rows === undefined) return { kind: 'CannotEmbed', message: 'this model takes no token types (its shape has no tokenTypes): leave tokenTypeIds out' };
      if (types.length !== prompt) return { kind: 'CannotEmbed', message: `tokenTypeIds has ${types.length} entries for ${prompt} prompt tokens` };
      const bad = types.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= rows);
      if (bad >= 0) return { kind: 'CannotEmbed', message: `tokenTypeIds[${bad}] = ${String(types[bad])} is not a token type in [0, ${rows})` };
    }
    if (this.backend.shape.wholeSequences === true) {
      // An encoder reads its whole prompt in one step and generates nothing (embedding.ts, E3).
      const budget = this.scheduler.config.maxNumBatchedTokens;
      if (prompt > maxContext) return { kind: 'PromptTooLong', message: `the text has ${prompt} tokens; the model has ${maxContext} positions` };
      if (prompt > budget)
        return { kind: 'PromptTooLong', message: `the text has ${prompt} tokens; an encoder reads a text in one step, and a step holds ${budget} (scheduler.maxNumBatchedTokens)` };
      if (!this.kv.fitsEmpty(prompt)) return { kind: 'PromptTooLong', message: `the text has ${prompt} tokens; the whole KV cache cannot hold them` };
      return undefined;
    }
    if (prompt >= maxContext) return { kind: 'PromptTooLong', message: `the prompt has ${prompt} tokens; the model's context is ${maxContext}` };
    if (!this.kv.fitsEmpty(prompt + 1)) return { kind: 'PromptTooLong', message: `the prompt has ${prompt} tokens; the whole KV cache cannot hold ${prompt + 1}` };
    return undefined;
  }

  /** A live request for `spec`, not queued yet. */
  private create(spec: RequestSpec, sink: RequestSink): LiveRequest {
    const id = this.nextId++;
    const { shape } = this.backend;
    const request = new LiveRequest(id, spec, sink, this.decoder, shape.maxContextLength, this.eos, shape.vocabSize, shape.hiddenSize ?? 0, this.kv.specs.length === 1);
    this.live.set(id, request);
    return request;
  }

  /** Ends a request with 'aborted'. Legal at any time, any number of times. */
  abort(requestId: number, error: Error): void {
    const live = this.live.get(requestId);
    if (live !== undefined) this.finish(live, 'aborted', error, false);
  }

  /** Fails every request with `error` and refuses new ones. */
  close(error: Error): void {
    this.closed = true;
    for (const live of [...this.live.values()]) this.finish(live, 'aborted', error, false);
  }

  /** Resolves when the loop has no work and no step in flight. */
  whenIdle(): Promise<void> {
    if (!this.looping) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private kick(): void {
    if (this.looping) return;
    this.looping = true;
    // Start on the next turn, so requests made in the same tick share the first step.
    setImmediate(() => void this.loop().catch(() => {}));
  }

  private async loop(): Promise<void> {
    try {
      while (this.scheduler.hasWork) {
        await this.step();
        // Let aborts, new requests and stream consumers in between steps.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      // A bug, not a capacity problem: fail what is live, keep the process.
      this.log(`engine loop failed: ${String(error)}`);
      const failure = new EngineError(`the engine loop failed: ${String(error)}`, { cause: error });
      for (const live of [...this.live.values()]) this.finish(live, 'error', failure, false);
    } finally {
      this.looping = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async step(): Promise<void> {
    const started = performance.now();
    this.proposeDrafts();
    const plan = this.schedule();
    if (plan.scheduled.length === 0) return;
    const running = this.execute(plan);
    // While the backend computes: the grammars only change when a token is accepted (the previous step).
    try {
      this.prepareChoices(plan);
    } finally {
      // The masks the batch lent the backend are filled: it may sample those rows now.
      if (this.masksReady !== undefined) Atomics.store(this.masksReady, 0, 1);
      this.masksReady = undefined;
    }
    const result = await running;
    if (result === undefined) return; // the backend failed; the step's requests are finished with BackendError
    let chosen: Chosen;
    try {
      this.collectPooled(plan, result);
      this.advance(plan);
      chosen = await this.chooseTokens(plan, result);
    } finally {
      // Nothing holds a step's logits past token choice: the backend may reuse their memory.
      this.releaseResult(result);
    }
    this.emit(plan, chosen);
    this.steps++;
    const info: StepInfo = {
      step: this.steps,
      scheduledRequests: plan.scheduled.length,
      scheduledTokens: plan.numTokens,
      preempted: plan.preempted.length,
      running: this.scheduler.running.length,
      waiting: this.scheduler.waiting.length,
      durationMs: performance.now() - started,
    };
    this.notify(() => this.observer.onStep?.(info));
  }

  /**
   * Speculative decoding: each running request that speculates and decodes
   * (one pending token) gets its prompt-lookup draft for this step, as long
   * as its pace allows (S5, S7) and no longer than its length limit leaves
   * room for (S2); the others none.
   */
  private proposeDrafts(): void {
    for (const running of this.scheduler.running) {
      const request = running as LiveRequest;
      if (!request.speculates) continue;
      if (request.numPending !== 1) {
        request.draft = [];
        continue;
      }
      const config = request.spec.speculative!;
      request.draftPace ??= new DraftPace(config.tokens);
      const length = Math.min(request.draftPace.draftLength(), request.lengthLimit - request.tokens.length - 1);
      request.draft = length <= 0 ? [] : lookupDraft(request.tokens, config.ngram, length);
    }
  }

  /** The scheduler's plan; the requests it preempted are reported, those it failed are finished. */
  private schedule(): StepPlan {
    const plan = this.scheduler.schedule();
    for (const victim of plan.preempted) this.notify(() => this.observer.onPreempt?.(victim.id));
    for (const failure of plan.failed) {
      const request = failure.request as LiveRequest;
      if (request.status === 'finished') continue;
      if (failure.reason === 'error') this.log(`request ${request.id} failed: ${failure.message}`);
      this.finish(request, failure.reason, failure.reason === 'error' ? new EngineError(failure.message) : undefined, true);
    }
    return plan;
  }

  /** Runs the plan's batch. A failure (or a result token choice cannot read) fails this step's requests only: undefined. */
  private async execute(plan: StepPlan): Promise<StepResult | undefined> {
    const batch = buildBatch(
      plan,
      this.kv,
      (request) => (request as LiveRequest).choice.takesArgmax,
      // A sampled request that speculates draws every token on the JS sampler, the reference, with or
      // without a draft this step: its stream then never depends on which steps had drafts (S6).
      (request) => ((request as LiveRequest).speculates ? undefined : (request as LiveRequest).choice.backendSampling()),
    );
    this.masksReady = batch.sampling?.masksReady;
    // The copies the forks after the last step asked for, made before this step writes anything (P3).
    const blockCopies = this.pendingCopies.isEmpty ? undefined : this.pendingCopies.take((id) => this.kv.has(id));
    try {
      const result = await this.backend.execute(blockCopies === undefined ? batch : { ...batch, blockCopies });
      const problem =
        resultProblem(result, batch.logitsIndices.length, this.backend.shape.vocabSize) ??
        hiddenProblem(result, batch.hiddenIndices?.length ?? 0, this.backend.shape.hiddenSize ?? 0);
      if (problem !== undefined) {
        this.releaseResult(result);
        throw new Error(problem);
      }
      return result;
    } catch (error) {
      const failure = new BackendError(`the backend failed a step: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      this.log(failure.message);
      for (const { request } of plan.scheduled) this.finish(request as LiveRequest, 'error', failure, false);
      return undefined;
    }
  }

  /** Hands a step's result back to the backend; a backend whose release throws only gets logged. */
  private releaseResult(result: StepResult): void {
    try {
      this.backend.release?.(result);
    } catch (error) {
      this.log(`the backend failed to release a step's result: ${String(error)}`);
    }
  }

  /**
   * Prepares the choice of each request that samples in this step (a guided
   * request's mask). A request whose grammar allows no token ends now with
   * GrammarDeadEndError (its output from the step in flight is discarded, as
   * for an abort); the others go on.
   */
  private prepareChoices(plan: StepPlan): void {
    for (const entry of plan.scheduled) {
      const request = entry.request as LiveRequest;
      if (!entry.samples || request.status === 'finished' || request.choice.prepare()) continue;
      this.finish(request, 'error', new GrammarDeadEndError(`request ${request.id}: the grammar allows no token after ${request.tokens.length - request.numPromptTokens} generated tokens`), false);
    }
  }

  /** Gives each embedding request the hidden rows of its tokens this step computed, in plan order (embedding.ts, E2). */
  private collectPooled(plan: StepPlan, result: StepResult): void {
    const { hidden } = result;
    let row = 0;
    for (const entry of plan.scheduled) {
      const request = entry.request as LiveRequest;
      const { pooled } = request;
      if (pooled === undefined) continue;
      const rows = pooledOffsets(request.spec.embedding!.pooling, request.numComputed, entry.numTokens, request.tokens.length).length;
      if (request.status !== 'finished' && hidden !== undefined) {
        pooled.beginChunk(request.numComputed);
        for (let i = 0; i < rows; i++) pooled.add(hidden, row + i);
      }
      row += rows;
    }
  }

  /** Counts the step's tokens as computed and caches the blocks they completed. Requests finished meanwhile are skipped. */
  private advance(plan: StepPlan): void {
    const caching = this.kv.prefixCaching;
    const blockSize = this.kv.blockSize;
    for (const entry of plan.scheduled) {
      const request = entry.request as LiveRequest;
      if (request.status === 'finished') continue; // aborted while the step ran: discard its output
      const before = request.numComputed;
      // Draft tokens count as computed only once verified (settleDraft).
      const after = before + entry.numTokens - (entry.numDraft ?? 0);
      request.numComputed = after;
      this.computedTokens += entry.numTokens;
      // The cache's hashes cover every full block computed before this step, so
      // only a step that completes a block has anything to cache.
      if (caching && Math.floor(after / blockSize) > Math.floor(before / blockSize)) {
        this.kv.cacheComputed(request.id, request.tokens, after);
      }
      // An embedding request is done once its whole prompt is computed.
      if (request.pooled !== undefined && after === request.tokens.length) this.finish(request, 'stop', undefined, false, request.pooled.result());
      // n > 1: the prompt is computed, and its row is in this step's result: the followers fork now (P1).
      if (request.followers.length > 0 && after === request.tokens.length) this.forkFollowers(request);
    }
  }

  /**
   * Forks each follower of `leader` (whose prompt this step completed): it
   * shares the leader's blocks and runs from the next step, its first token
   * drawn from the leader's row now (P1). One that cannot fork is queued on
   * its own (P2).
   */
  private forkFollowers(leader: LiveRequest): void {
    const followers = leader.followers;
    leader.followers = [];
    const prompt = leader.tokens.length;
    for (const follower of followers) {
      follower.leader = undefined;
      const forked = this.scheduler.hasRoomToAdopt ? this.kv.fork(leader.id, follower.id, prompt) : undefined;
      if (forked === undefined || !forked.ok) {
        this.scheduler.add(follower);
        continue;
      }
      this.pendingCopies.add(follower.id, forked.value);
      follower.numComputed = prompt;
      follower.numCachedPrefix = leader.numCachedPrefix;
      this.scheduler.adopt(follower);
      (leader.forkedNow ??= []).push(follower);
      this.forks++;
    }
  }

  /**
   * Each sampling request's next token, by plan entry (undefined: the entry does
   * not sample, or its request finished). Broken logits fail that request alone.
   * A non-greedy draw over a real vocabulary costs milliseconds (64 of them, a
   * second), so after such a draw the loop yields to the event loop once
   * APPLY_SLICE_MS have passed. Safe because nothing allocates while a step is
   * in flight (aborts only free; requests that finish meanwhile are skipped).
   */
  private async chooseTokens(plan: StepPlan, result: StepResult): Promise<Chosen> {
    const vocab = this.backend.shape.vocabSize;
    const entries = plan.scheduled;
    const chosen: Chosen = { tokens: new Array(entries.length), runs: undefined, forks: undefined };
    let row = 0;
    let sliceStart = performance.now();
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (!entry.samples) continue;
      const logitsRow = row;
      const numDraft = entry.numDraft ?? 0;
      row += 1 + numDraft;
      const request = entry.request as LiveRequest;
      const forked = request.forkedNow;
      if (forked !== undefined) {
        request.forkedNow = undefined;
        // Before the leader's choice, which may overwrite its row (penalties, a mask).
        (chosen.forks ??= new Array(entries.length))[i] = this.chooseForked(forked, result.logits.slice(logitsRow * vocab, (logitsRow + 1) * vocab));
      }
      if (request.status === 'finished') continue;
      const { choice } = request;
      if (numDraft > 0) {
        const run = this.verifyDraft(request, result, logitsRow, numDraft);
        if (run !== undefined) (chosen.runs ??= new Array(entries.length))[i] = run;
      } else {
        const picked = choice.choose(result, logitsRow, vocab);
        if (picked.ok) chosen.tokens[i] = picked.value;
        else {
          this.log(`request ${request.id} failed: ${picked.error.message}`);
          this.finish(request, 'error', new BackendError(picked.error.message), false);
        }
      }
      if (choice.isSlow && performance.now() - sliceStart > APPLY_SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
    return chosen;
  }

  /**
   * The first token of each follower forked in this step, drawn by its own
   * choice from a copy of the leader's raw row (P1): a result of that one row,
   * with nothing the backend sampled or picked for the leader.
   */
  private chooseForked(followers: readonly LiveRequest[], row: Float32Array): [LiveRequest, SampledToken][] {
    const picks: [LiveRequest, SampledToken][] = [];
    for (const follower of followers) {
      if (follower.status === 'finished') continue;
      if (!follower.choice.prepare()) {
        this.finish(follower, 'error', new GrammarDeadEndError(`request ${follower.id}: the grammar allows no token at the start`), false);
        continue;
      }
      const picked = follower.choice.choose({ logits: row.slice() }, 0, row.length);
      if (picked.ok) picks.push([follower, picked.value]);
      else {
        this.log(`request ${follower.id} failed: ${picked.error.message}`);
        this.finish(follower, 'error', new BackendError(picked.error.message), false);
      }
    }
    return picks;
  }

  /**
   * A draft's verification: the request's own token at each of the draft's
   * rows, in order, up to and including the first that differs from the draft
   * (its token there), or all of them and the token after the draft. Greedy:
   * each is its row's argmax (S1). Sampled: each is drawn by the request's
   * sampler from its row, with the penalties of the tokens kept before it and
   * the stream's next number, which is the rejection rule (S6). Undefined if
   * the request failed (broken logits).
   */
  private verifyDraft(request: LiveRequest, result: StepResult, firstRow: number, numDraft: number): SampledToken[] | undefined {
    const vocab = this.backend.shape.vocabSize;
    const run: SampledToken[] = [];
    for (let r = 0; r <= numDraft; r++) {
      const picked = request.choice.choose(result, firstRow + r, vocab);
      if (!picked.ok) {
        this.log(`request ${request.id} failed: ${picked.error.message}`);
        this.finish(request, 'error', new BackendError(picked.error.message), false);
        return undefined;
      }
      run.push(picked.value);
      if (r < numDraft && picked.value.token !== request.draft[r]) break;
    }
    request.drafted += numDraft;
    request.accepted += run.length - 1;
    request.draftPace?.verified(numDraft, run.length - 1);
    this.drafted += numDraft;
    this.accepted += run.length - 1;
    return run;
  }

  /** Hands each chosen token to its request (text, stop rules, sink), in plan order. */
  private emit(plan: StepPlan, chosen: Chosen): void {
    const entries = plan.scheduled;
    const { tokens, runs, forks } = chosen;
    for (let i = 0; i < entries.length; i++) {
      const request = entries[i]!.request as LiveRequest;
      for (const [follower, sampled] of forks?.[i] ?? []) {
        if (follower.status !== 'finished') this.accept(follower, sampled.token, sampled.logprob === undefined ? undefined : [sampled]);
      }
      const run = runs?.[i];
      if (run !== undefined) {
        this.emitRun(request, run);
        continue;
      }
      const sampled = tokens[i];
      if (sampled === undefined || request.status === 'finished') continue;
      this.accept(request, sampled.token, sampled.logprob === undefined ? undefined : [sampled]);
    }
  }

  /**
   * A verified draft's tokens, one by one, so a stop or the length limit inside
   * the run ends the request there (S2); then the cache is rolled back to what
   * is computed: the pending token and the accepted draft tokens (S3, K7).
   */
  private emitRun(request: LiveRequest, run: readonly SampledToken[]): void {
    for (const sampled of run) {
      if (request.status === 'finished') return; // ended inside the run (or aborted meanwhile): freed whole
      this.accept(request, sampled.token, sampled.logprob === undefined ? undefined : [sampled]);
    }
    if (request.status === 'finished') return;
    const before = request.numComputed;
    const after = before + run.length - 1;
    request.numComputed = after;
    request.draft = [];
    const rolledBack = this.kv.truncate(request.id, after);
    if (!rolledBack.ok) {
      const message = `request ${request.id}: rejected draft tokens could not leave the cache: ${describe(rolledBack.error)}`;
      this.log(message);
      this.finish(request, 'error', new EngineError(message), false);
      return;
    }
    const blockSize = this.kv.blockSize;
    if (this.kv.prefixCaching && Math.floor(after / blockSize) > Math.floor(before / blockSize)) {
      this.kv.cacheComputed(request.id, request.tokens, after);
    }
  }

  /** Appends a sampled token, emits its text and decides whether the request is done. */
  private accept(request: LiveRequest, token: number, logprobs: readonly SampledToken[] | undefined): void {
    // Masked logits leave only allowed tokens, unless the model gave all of them -Infinity (or NaN).
    if (!request.choice.accept(token)) {
      this.finish(request, 'error', new GrammarDeadEndError(`request ${request.id}: the model gave every token the grammar allows zero probability`), false);
      return;
    }
    request.tokens.push(token);
    if (request.checksStopTokens && this.isStopToken(request.spec.stop, token)) {
      request.sink.onDelta(delta('', token, logprobs));
      this.finish(request, 'stop', undefined, true);
      return;
    }
    const text = request.detokenizer.push(token);
    const matched = request.stops.isEmpty ? undefined : request.stops.push(text);
    request.sink.onDelta(delta(matched === undefined ? text : matched.text, token, logprobs));
    if (matched?.stopped === true) this.finish(request, 'stop', undefined, false);
    else if (request.choice.isTerminated) this.finish(request, 'stop', undefined, true);
    else if (request.tokens.length >= request.lengthLimit) this.finish(request, 'length', undefined, true);
  }

  private isStopToken(stop: StopCriteria, token: number): boolean {
    return stop.stopTokenIds.includes(token) || (!stop.ignoreEos && this.eos.has(token));
  }

  private finish(request: LiveRequest, reason: FinishReason, error: Error | undefined, flush: boolean, embedding?: Float32Array): void {
    if (!request.finish(reason, error)) return;
    this.live.delete(request.id);
    this.leaveGroup(request);
    this.scheduler.remove(request);
    this.kv.free(request.id);
    const finalText = flush ? finalTextOf(request) : '';
    const speculative = request.speculates ? { speculative: { drafted: request.drafted, accepted: request.accepted } } : undefined;
    request.sink.onFinish({ reason, ...(error && { error }), finalText, cachedPromptTokens: request.numCachedPrefix, ...(embedding && { embedding }), ...speculative });
  }

  /**
   * n > 1 before the fork (P4): a follower leaves its leader's list; a leader
   * hands its followers to the first of them, queued in its place.
   */
  private leaveGroup(request: LiveRequest): void {
    const { leader, followers } = request;
    if (leader !== undefined) {
      leader.followers = leader.followers.filter((follower) => follower !== request);
      request.leader = undefined;
    }
    if (followers.length === 0) return;
    request.followers = [];
    const [next, ...rest] = followers;
    next!.leader = undefined;
    next!.followers = rest;
    for (const follower of rest) follower.leader = next;
    this.scheduler.addFirst(next!);
  }

  private log(message: string): void {
    this.notify(() => this.observer.onLog?.(message));
  }

  /**
   * Observers are user code (event listeners, loggers): whatever they throw is
   * dropped here, so it can neither fail requests nor escape the loop.
   */
  private notify(callback: () => void): void {
    try {
      callback();
    } catch {
      // Deliberately ignored: an observer's failure is not the engine's.
    }
  }
}

/** Why a step's hidden states cannot be read (StepBatch.hiddenIndices asked for `rows`), or undefined. */
function hiddenProblem(result: StepResult, rows: number, hiddenSize: number): string | undefined {
  if (rows === 0) return undefined;
  const got = result.hidden?.length;
  return got === rows * hiddenSize ? undefined : `backend returned ${got ?? 'no'} hidden values, expected ${rows * hiddenSize}`;
}

/**
 * One step's chosen tokens by plan entry: `tokens` for plain entries (undefined:
 * it does not sample, or its request finished), `runs` for those that verified
 * a draft (speculative decoding), allocated only in a step that had one.
 */
interface Chosen {
  readonly tokens: (SampledToken | undefined)[];
  runs: (SampledToken[] | undefined)[] | undefined;
  /** By the leader's entry: the first tokens of the followers forked in this step (parallel-sampling.ts), emitted just before the leader's. */
  forks: ([LiveRequest, SampledToken][] | undefined)[] | undefined;
}

/** Longest stretch of sampling in one step before the loop lets timers and other requests run. */
const APPLY_SLICE_MS = 10;

/** What a request ending normally still holds back: an unfinished character, then stop-string look-ahead. */
function finalTextOf(request: LiveRequest): string {
  const tail = request.detokenizer.flush();
  if (request.stops.isEmpty) return tail;
  const matched = request.stops.push(tail);
  return matched.stopped ? matched.text : matched.text + request.stops.flush();
}

/** One step's output for one request; `logprobs` only when asked for (no spread on the hot path). */
function delta(text: string, token: number, logprobs: readonly SampledToken[] | undefined): RequestDelta {
  return logprobs === undefined ? { text, tokenIds: [token] } : { text, tokenIds: [token], logprobs };
}
