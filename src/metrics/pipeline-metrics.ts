/**
 * Serving figures of one pipeline as typed values: what `GET /metrics` of
 * `weft serve` prints, and what an embedding app can read in-process.
 *
 * Everything comes from the pipeline's events and stats(), so every request
 * counts, however it was made: KV usage per pool, queue lengths, preemptions,
 * outcomes by finish reason, prompt / cached / generated tokens, and the
 * timings (from a request's start, when it is queued, to its first tokens and
 * its end, as its consumer receives them).
 */

import { InvalidOptionError } from '../errors.js';
import type { ModelPipeline, PipelineStats } from '../pipeline/face.js';
import type { FinishReason, Usage } from '../pipeline/stream-parts.js';
import { Histogram, LATENCY_BOUNDS_S, TOKEN_INTERVAL_BOUNDS_S, type HistogramSnapshot } from './histogram.js';

/** What PipelineMetrics needs of a pipeline: its stats and events. */
export type MetricsSource = Pick<ModelPipeline, 'stats' | 'on' | 'off'>;

export interface MetricsSnapshot {
  readonly kv: PipelineStats['kv'];
  readonly running: number;
  readonly waiting: number;
  readonly preemptions: number;
  readonly steps: number;
  /** Finished requests by finish reason. */
  readonly requests: Readonly<Record<FinishReason, number>>;
  readonly promptTokens: number;
  /** Prompt tokens served from the prefix cache (at each request's last admission). */
  readonly prefixCacheHitTokens: number;
  readonly generationTokens: number;
  /** Speculative decoding: draft tokens verified, and accepted (0 where the pipeline reports none). */
  readonly speculativeDraftedTokens: number;
  readonly speculativeAcceptedTokens: number;
  /** Seconds from a request's start to its first tokens. */
  readonly timeToFirstToken: HistogramSnapshot;
  /** Seconds per output token after the first, per request that made more than one. */
  readonly timePerOutputToken: HistogramSnapshot;
  /** Seconds from a request's start to its end, whatever the end. */
  readonly requestLatency: HistogramSnapshot;
}

const FINISH_REASONS: readonly FinishReason[] = ['stop', 'length', 'tool_calls', 'aborted', 'error'];

export class PipelineMetrics {
  private readonly requests: Record<FinishReason, number> = { stop: 0, length: 0, tool_calls: 0, aborted: 0, error: 0 };
  private promptTokens = 0;
  private prefixCacheHitTokens = 0;
  private generationTokens = 0;
  private readonly ttft = new Histogram(LATENCY_BOUNDS_S);
  private readonly tpot = new Histogram(TOKEN_INTERVAL_BOUNDS_S);
  private readonly latency = new Histogram(LATENCY_BOUNDS_S);
  /** Running requests: start time and first-token time. Entries leave at finish. */
  private readonly clocks = new Map<number, { start: number; first?: number }>();

  private readonly onStart = (info: { requestId: number }): void => {
    this.clocks.set(info.requestId, { start: performance.now() });
  };
  private readonly onFirstToken = (info: { requestId: number }): void => {
    const clock = this.clocks.get(info.requestId);
    if (clock === undefined || clock.first !== undefined) return;
    clock.first = performance.now();
    this.ttft.observe((clock.first - clock.start) / 1000);
  };
  private readonly onFinish = (info: { requestId: number; finishReason: FinishReason; usage: Usage }): void => {
    // The engine's finish reasons are the five above; a reason we do not know is not counted.
    if (FINISH_REASONS.includes(info.finishReason)) this.requests[info.finishReason]++;
    this.promptTokens += info.usage.promptTokens;
    this.prefixCacheHitTokens += info.usage.cachedPromptTokens;
    this.generationTokens += info.usage.completionTokens;
    const clock = this.clocks.get(info.requestId);
    if (clock === undefined) return; // started before we listened
    this.clocks.delete(info.requestId);
    const now = performance.now();
    this.latency.observe((now - clock.start) / 1000);
    if (clock.first !== undefined && info.usage.completionTokens > 1) this.tpot.observe((now - clock.first) / 1000 / (info.usage.completionTokens - 1));
  };

  constructor(private readonly source: MetricsSource) {
    const given = source as Partial<Record<keyof MetricsSource, unknown>> | null | undefined;
    if (given === null || typeof given !== 'object' || typeof given.stats !== 'function' || typeof given.on !== 'function' || typeof given.off !== 'function') {
      const got = typeof given === 'string' ? `the string ${JSON.stringify(given)}` : given === null ? 'null' : typeof given !== 'object' ? typeof given : 'an object without stats(), on() and off()';
      throw new InvalidOptionError('source', `expected a Pipeline (new PipelineMetrics(await Pipeline.create(...))) or another object with its stats(), on() and off(); got ${got}`);
    }
    source.on('request-start', this.onStart);
    source.on('request-first-token', this.onFirstToken);
    source.on('request-finish', this.onFinish);
  }

  /** Stops listening to the pipeline; the figures so far stay readable. */
  detach(): void {
    this.source.off('request-start', this.onStart);
    this.source.off('request-first-token', this.onFirstToken);
    this.source.off('request-finish', this.onFinish);
    this.clocks.clear();
  }

  snapshot(): MetricsSnapshot {
    const stats = this.source.stats();
    return {
      kv: stats.kv,
      running: stats.running,
      waiting: stats.waiting,
      preemptions: stats.preemptions,
      steps: stats.steps,
      requests: { ...this.requests },
      promptTokens: this.promptTokens,
      prefixCacheHitTokens: this.prefixCacheHitTokens,
      generationTokens: this.generationTokens,
      speculativeDraftedTokens: stats.speculative?.drafted ?? 0,
      speculativeAcceptedTokens: stats.speculative?.accepted ?? 0,
      timeToFirstToken: this.ttft.snapshot(),
      timePerOutputToken: this.tpot.snapshot(),
      requestLatency: this.latency.snapshot(),
    };
  }
}
