/**
 * A request's state machine and token bookkeeping.
 *
 *   waiting ──admit──▶ running ──finish──▶ finished(stop | length | aborted | error)
 *      ▲                  │
 *      └──── preempted ◀──┘  (blocks freed whole; recomputed on re-admission)
 *
 * `abort` is legal in every state, any number of times: the first one finishes
 * the request, later ones are no-ops. A finished request never changes again.
 * Any other move not drawn above cannot happen in a correct engine: it throws
 * EngineError, which the engine loop turns into failed requests and a log line.
 */

import type { GrammarSource } from '../guided/grammar.js';
import type { EmbeddingSpec } from './embedding.js';
import type { SamplingParams } from '../sampling/params.js';
import type { DraftPace, SpeculativeConfig } from './speculative.js';
import { EngineError } from '../errors.js';

export type RequestStatus = 'waiting' | 'running' | 'preempted' | 'finished';
/** Why the engine ended a request. (The pipeline adds 'tool_calls'; the engine knows nothing of tools.) */
export type FinishReason = 'stop' | 'length' | 'aborted' | 'error';

const TRANSITIONS: Record<RequestStatus, readonly RequestStatus[]> = {
  waiting: ['running', 'finished'],
  running: ['preempted', 'finished'],
  preempted: ['running', 'finished'],
  finished: [],
};

export interface StopCriteria {
  readonly maxTokens: number;
  readonly stopTokenIds: readonly number[];
  readonly stopStrings: readonly string[];
  readonly ignoreEos: boolean;
}

export interface RequestSpec {
  readonly promptTokenIds: readonly number[];
  readonly sampling: SamplingParams;
  readonly stop: StopCriteria;
  /** Higher runs first under the priority policy; the lowest is preempted first. */
  readonly priority: number;
  /** Whether the output text leaves out special tokens (default true). */
  readonly skipSpecialTokens?: boolean;
  /** Constrains what may be sampled (guided generation); each request gets its own matcher. */
  readonly grammar?: GrammarSource;
  /** An embedding request (embedding.ts): the prompt only, pooled; it never samples. */
  readonly embedding?: EmbeddingSpec;
  /** Speculative decoding (speculative.ts); used only by unguided requests (greedy: S1, sampled: S6). */
  readonly speculative?: SpeculativeConfig;
}

const NO_DRAFT: readonly number[] = Object.freeze([]);

export class Request {
  readonly id: number;
  readonly spec: RequestSpec;
  /** Admission order; later arrivals are preempted first. */
  readonly arrival: number;
  status: RequestStatus = 'waiting';
  finishReason: FinishReason | undefined;
  error: Error | undefined;
  /** Prompt followed by every generated token. */
  readonly tokens: number[];
  /** Tokens whose K/V are in the cache. Reset to 0 by preemption. */
  numComputed = 0;
  /** Tokens of the prefix that came from the prefix cache at the last admission. */
  numCachedPrefix = 0;
  /**
   * Speculative decoding: the tokens proposed to follow `tokens` in the coming
   * step (never part of `tokens`; the scheduler may use fewer). Empty when none.
   */
  draft: readonly number[] = NO_DRAFT;
  /** Draft tokens verified, and of those accepted, over the request's life. */
  drafted = 0;
  accepted = 0;
  /** How long its drafts may be and when it drafts (speculative.ts, S5 and S7); undefined until its first decode that may draft. */
  draftPace: DraftPace | undefined;

  constructor(id: number, arrival: number, spec: RequestSpec) {
    this.id = id;
    this.arrival = arrival;
    this.spec = spec;
    this.tokens = [...spec.promptTokenIds];
  }

  get numPromptTokens(): number {
    return this.spec.promptTokenIds.length;
  }

  /** Tokens still to compute before the next sample. */
  get numPending(): number {
    return this.tokens.length - this.numComputed;
  }

  /** Moves along the diagram above; throws EngineError for a move it does not draw. */
  transition(to: RequestStatus): void {
    if (!TRANSITIONS[this.status].includes(to)) throw new EngineError(`request ${this.id}: illegal transition ${this.status} -> ${to}`);
    this.status = to;
  }

  /** Moves to finished; a no-op (returns false) if already finished. */
  finish(reason: FinishReason, error?: Error): boolean {
    if (this.status === 'finished') return false;
    this.status = 'finished';
    this.finishReason = reason;
    this.error = error;
    return true;
  }

  /** Back to the queue with nothing computed (preemption by recompute). */
  preempt(): void {
    this.transition('preempted');
    this.numComputed = 0;
    this.numCachedPrefix = 0;
    this.draft = NO_DRAFT;
  }
}
