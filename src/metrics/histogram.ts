/**
 * A fixed-bucket histogram (Prometheus semantics: bucket i counts observations
 * <= bounds[i]; the implicit last bucket is +Inf). Cumulative counts are
 * computed when read, so observe() is one search and two additions.
 */

export interface HistogramSnapshot {
  /** Upper bounds of the buckets, ascending (the +Inf bucket is implied). */
  readonly bounds: readonly number[];
  /** Cumulative counts per bound: observations <= bounds[i]. */
  readonly cumulativeCounts: readonly number[];
  readonly count: number;
  readonly sum: number;
}

export class Histogram {
  private readonly counts: number[];
  private total = 0;
  private sum = 0;

  constructor(private readonly bounds: readonly number[]) {
    for (let i = 1; i < bounds.length; i++) {
      if (!(bounds[i]! > bounds[i - 1]!)) throw new RangeError('histogram bounds must ascend');
    }
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    this.total++;
    this.sum += value;
    const i = this.bounds.findIndex((bound) => value <= bound);
    if (i >= 0) this.counts[i]!++;
  }

  snapshot(): HistogramSnapshot {
    let running = 0;
    const cumulativeCounts = this.counts.map((count) => (running += count));
    return { bounds: this.bounds, cumulativeCounts, count: this.total, sum: this.sum };
  }
}

/** Seconds: from a millisecond to a couple of minutes (time to first token, request latency). */
export const LATENCY_BOUNDS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds per output token: 0.1 ms to 2.5 s. */
export const TOKEN_INTERVAL_BOUNDS_S = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
