/**
 * A MetricsSnapshot in the Prometheus text exposition format (version 0.0.4).
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units) with
 * a `weft_` prefix; labels name the KV pool and the finish reason.
 */

import type { HistogramSnapshot } from '../metrics/histogram.js';
import type { MetricsSnapshot } from '../metrics/pipeline-metrics.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function toPrometheusText(m: MetricsSnapshot, model: string): string {
  const out: string[] = [];
  const base = { model };
  const metric = (name: string, type: 'gauge' | 'counter' | 'histogram', help: string): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  const sample = (name: string, labels: Record<string, string>, value: number): void => {
    out.push(`${name}${labelText(labels)} ${formatValue(value)}`);
  };

  metric('weft_kv_cache_used_blocks', 'gauge', 'KV cache blocks held by requests, per pool.');
  for (const pool of m.kv.pools) sample('weft_kv_cache_used_blocks', { ...base, pool: pool.name }, pool.usedBlocks);
  metric('weft_kv_cache_free_blocks', 'gauge', 'KV cache blocks no request holds, per pool (cached ones included).');
  for (const pool of m.kv.pools) sample('weft_kv_cache_free_blocks', { ...base, pool: pool.name }, pool.freeBlocks);
  metric('weft_kv_cache_cached_blocks', 'gauge', 'Free KV cache blocks that still hold a reusable prompt prefix, per pool.');
  for (const pool of m.kv.pools) sample('weft_kv_cache_cached_blocks', { ...base, pool: pool.name }, pool.cachedBlocks);
  metric('weft_kv_cache_blocks_total', 'gauge', 'KV cache blocks per pool.');
  for (const pool of m.kv.pools) sample('weft_kv_cache_blocks_total', { ...base, pool: pool.name }, pool.totalBlocks);
  metric('weft_kv_cache_usage_ratio', 'gauge', 'Fraction of each pool\'s blocks held by requests.');
  for (const pool of m.kv.pools) sample('weft_kv_cache_usage_ratio', { ...base, pool: pool.name }, pool.totalBlocks === 0 ? 0 : pool.usedBlocks / pool.totalBlocks);

  metric('weft_requests_running', 'gauge', 'Requests running in the engine.');
  sample('weft_requests_running', base, m.running);
  metric('weft_requests_waiting', 'gauge', 'Requests waiting for admission (queued or preempted).');
  sample('weft_requests_waiting', base, m.waiting);
  metric('weft_preemptions_total', 'counter', 'Requests preempted (freed whole, recomputed later).');
  sample('weft_preemptions_total', base, m.preemptions);
  metric('weft_engine_steps_total', 'counter', 'Engine steps run.');
  sample('weft_engine_steps_total', base, m.steps);
  metric('weft_request_finished_total', 'counter', 'Finished requests by finish reason.');
  for (const [reason, value] of Object.entries(m.requests)) sample('weft_request_finished_total', { ...base, finish_reason: reason }, value);
  metric('weft_prompt_tokens_total', 'counter', 'Prompt tokens of finished requests.');
  sample('weft_prompt_tokens_total', base, m.promptTokens);
  metric('weft_prefix_cache_hit_tokens_total', 'counter', 'Prompt tokens served from the prefix cache.');
  sample('weft_prefix_cache_hit_tokens_total', base, m.prefixCacheHitTokens);
  metric('weft_generation_tokens_total', 'counter', 'Generated tokens of finished requests.');
  sample('weft_generation_tokens_total', base, m.generationTokens);

  metric('weft_speculative_draft_tokens_total', 'counter', 'Speculative decoding: draft tokens verified.');
  sample('weft_speculative_draft_tokens_total', base, m.speculativeDraftedTokens);
  metric('weft_speculative_accepted_tokens_total', 'counter', 'Speculative decoding: draft tokens the model accepted.');
  sample('weft_speculative_accepted_tokens_total', base, m.speculativeAcceptedTokens);

  histogram(out, 'weft_time_to_first_token_seconds', 'Seconds from a request\'s arrival to its first output.', m.timeToFirstToken, base);
  histogram(out, 'weft_time_per_output_token_seconds', 'Seconds per output token after the first, per request.', m.timePerOutputToken, base);
  histogram(out, 'weft_request_latency_seconds', 'Seconds from a request\'s arrival to its end.', m.requestLatency, base);
  return `${out.join('\n')}\n`;
}

function histogram(out: string[], name: string, help: string, h: HistogramSnapshot, labels: Record<string, string>): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  h.bounds.forEach((bound, i) => out.push(`${name}_bucket${labelText({ ...labels, le: String(bound) })} ${h.cumulativeCounts[i]}`));
  out.push(`${name}_bucket${labelText({ ...labels, le: '+Inf' })} ${h.count}`);
  out.push(`${name}_sum${labelText(labels)} ${formatValue(h.sum)}`);
  out.push(`${name}_count${labelText(labels)} ${h.count}`);
}

function labelText(labels: Record<string, string>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`).join(',')}}`;
}

function formatValue(value: number): string {
  return Number.isFinite(value) ? String(value) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
}
