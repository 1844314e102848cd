/**
 * Serving figures of one pipeline as typed values: what `GET /metrics` of
 * `weft serve` prints, and what an embedding app can read in-process.
 *
 * Two sources, each counted once:
 * - the pipeline's events and stats() (every request, however it was made):
 *   KV usage per pool, queue lengths, preemptions, outcomes by finish reason,
 *   prompt / cached / generated tokens;
 * - streams passed through track() (the server tracks each of its requests):
 *   time to first token, time per output token, request latency, measured as
 *   the caller sees them (queueing included).
 */

import type { FinishReason, PipelineStats, StreamPart, Usage } from '../index.js';
import { Histogram, LATENCY_BOUNDS_S, TOKEN_INTERVAL_BOUNDS_S, type HistogramSnapshot } from './histogram.js';

/** What PipelineMetrics needs of a pipeline (a structural subset of Pipeline). */
export interface MetricsSource {
  stats(): PipelineStats;
  on(event: 'request-finish', listener: (info: { requestId: number; finishReason: FinishReason; usage: Usage }) => void): unknown;
  off(event: 'request-finish', listener: (info: { requestId: number; finishReason: FinishReason; usage: Usage }) => void): unknown;
}

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
  /** Seconds from the start of a tracked stream to its first output. */
  readonly timeToFirstToken: HistogramSnapshot;
  /** Seconds per output token after the first, per tracked request. */
  readonly timePerOutputToken: HistogramSnapshot;
  /** Seconds from the start of a tracked stream to its end, whatever the end. */
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
  private readonly onFinish = (info: { finishReason: FinishReason; usage: Usage }): void => {
    // The engine's finish reasons are the five above; anything else would be a new one we do not know.
    if (FINISH_REASONS.includes(info.finishReason)) this.requests[info.finishReason]++;
    this.promptTokens += info.usage.promptTokens;
    this.prefixCacheHitTokens += info.usage.cachedPromptTokens;
    this.generationTokens += info.usage.completionTokens;
  };

  constructor(private readonly source: MetricsSource) {
    source.on('request-finish', this.onFinish);
  }

  /** Stops listening to the pipeline; the figures so far stay readable. */
  detach(): void {
    this.source.off('request-finish', this.onFinish);
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
      timeToFirstToken: this.ttft.snapshot(),
      timePerOutputToken: this.tpot.snapshot(),
      requestLatency: this.latency.snapshot(),
    };
  }

  /**
   * Passes `parts` through unchanged and times them: the clock starts when
   * iteration starts (when the pipeline queues the request).
   */
  track(parts: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
    const metrics = this;
    return {
      async *[Symbol.asyncIterator]() {
        const started = performance.now();
        let first: number | undefined;
        try {
          for await (const part of parts) {
            if (first === undefined && part.type !== 'finish') {
              first = performance.now();
              metrics.ttft.observe((first - started) / 1000);
            }
            if (part.type === 'finish' && first !== undefined && part.usage.completionTokens > 1) {
              metrics.tpot.observe((performance.now() - first) / 1000 / (part.usage.completionTokens - 1));
            }
            yield part;
          }
        } finally {
          metrics.latency.observe((performance.now() - started) / 1000);
        }
      },
    };
  }
}
