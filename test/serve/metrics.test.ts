/** Typed metrics (from the pipeline's events and stats) and their Prometheus text. */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Histogram } from '../../src/metrics/histogram.js';
import { PipelineMetrics } from '../../src/index.js';
import { toPrometheusText } from '../../src/serve/metrics-text.js';
import { demoPresent, startDemoServer, type InProcessServer } from './harness.js';

describe('Histogram', () => {
  it('counts observations cumulatively per bound, with sum and count', () => {
    const h = new Histogram([1, 2, 5]);
    for (const v of [0.5, 1, 1.5, 3, 10, Number.NaN]) h.observe(v);
    expect(h.snapshot()).toEqual({ bounds: [1, 2, 5], cumulativeCounts: [2, 3, 4], count: 5, sum: 16 });
    expect(() => new Histogram([2, 1])).toThrow(RangeError);
  });
});

describe.skipIf(!demoPresent)('PipelineMetrics', () => {
  let s: InProcessServer;
  beforeAll(async () => {
    s = await startDemoServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('counts outcomes and tokens of every request, and times them', async () => {
    const metrics = new PipelineMetrics(s.pipe);
    const prompt = 'The weather in Paris is';
    const first = await s.pipe.generate(prompt, { maxTokens: 8, temperature: 0 });
    let parts = 0;
    for await (const _ of s.pipe.stream(prompt, { maxTokens: 8, temperature: 0 })) parts++;
    const controller = new AbortController();
    await expect(
      (async () => {
        for await (const _ of s.pipe.stream(prompt, { maxTokens: 100, ignoreEos: true, signal: controller.signal })) controller.abort();
      })(),
    ).rejects.toThrow();
    const m = metrics.snapshot();
    expect(m.requests).toEqual({ stop: 0, length: 2, tool_calls: 0, aborted: 1, error: 0 });
    expect(m.generationTokens).toBeGreaterThanOrEqual(2 * first.usage.completionTokens);
    expect(m.promptTokens).toBe(3 * first.usage.promptTokens);
    expect(parts).toBeGreaterThan(1);
    // All three timed (the aborted one got its first token before it stopped).
    expect(m.timeToFirstToken.count).toBe(3);
    expect(m.timePerOutputToken.count).toBeGreaterThanOrEqual(2);
    expect(m.requestLatency.count).toBe(3);
    expect(m.timeToFirstToken.sum).toBeGreaterThan(0);
    expect(m.timeToFirstToken.sum).toBeLessThanOrEqual(m.requestLatency.sum);
    expect(m.kv.pools[0]!.usedBlocks).toBe(0);

    const text = toPrometheusText(m, 'weft-demo');
    expect(text).toContain('# TYPE weft_time_to_first_token_seconds histogram');
    expect(text).toContain('weft_request_finished_total{model="weft-demo",finish_reason="aborted"} 1');
    expect(text).toContain('weft_kv_cache_used_blocks{model="weft-demo",pool="attention"} 0');
    expect(text).toMatch(/weft_time_to_first_token_seconds_bucket\{model="weft-demo",le="\+Inf"\} 3\n/);
    // Every sample line is `name{labels} number`.
    for (const line of text.trim().split('\n').filter((l) => !l.startsWith('#'))) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? [0-9.e+-]+$|Inf$/);
    metrics.detach();
    await s.pipe.generate(prompt, { maxTokens: 2 });
    expect(metrics.snapshot().requests.length).toBe(2);
  });
});
