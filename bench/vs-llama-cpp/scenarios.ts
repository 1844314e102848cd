/**
 * What each side measures, the same way on both (side-weft.ts, side-llama.ts
 * implement `Engine`): token ids in, token ids out, greedy, EOS ignored.
 */

/** One request: prompt ids in, `maxTokens` greedy ids generated, resolved when the last one is out. */
export interface Engine {
  /** Prepares for `sequences` concurrent requests of up to `tokensPerSequence` tokens. */
  prepare(sequences: number, tokensPerSequence: number): Promise<void>;
  run(prompt: number[], maxTokens: number): Promise<void>;
}

/** One one-stream decode measurement (a pair of runs, see decodeRates) and the memory bandwidth (GB/s) probed just before and just after it. */
export interface Decode1Pair {
  tokPerSecond: number;
  bandwidthBefore: number;
  bandwidthAfter: number;
}

export interface Measurements {
  /** The median of the one-stream decode measurements, tok/s. */
  decode1: number;
  /**
   * Each one-stream decode measurement with the bandwidth probed around it:
   * its bound, taken when it ran (the host's bandwidth moves by a quarter
   * within a minute). Absent when the side was given no probe.
   */
  decode1Pairs?: Decode1Pair[];
  prefill512: number;
  agg: Record<string, number>;
  ttft16: { p50: number; p99: number };
}

export const SHAPES = { decodeTokens: 64, decode1Pairs: 5, promptTokens: 16, prefillTokens: 512, aggTokens: { 4: 32, 16: 32, 64: 16 } as Record<number, number>, ttftPrompt: 64 };

/** Deterministic prompt ids below `vocab` (regular tokens only). */
export function promptIds(count: number, stream: number, vocab: number): number[] {
  let state = (0x9e3779b1 ^ Math.imul(stream + 1, 0x85ebca6b)) >>> 0 || 1;
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    ids.push(300 + (state % (vocab - 300)));
  }
  return ids;
}

/** The median (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Wall time (ms) of `streams` requests started together, each generating `tokens`. */
async function wall(engine: Engine, streams: number, promptTokens: number, tokens: number, vocab: number, salt: number): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: streams }, (_, s) => engine.run(promptIds(promptTokens, salt + s, vocab), tokens)));
  return performance.now() - started;
}

/**
 * Decode rates come from differences: the same requests generating T tokens
 * and generating 1 take the same prefill, so (T - 1) tokens per stream over
 * the difference in wall time is the decode rate, on both sides alike and
 * without per-token callbacks (weft streams token ids only with logprobs).
 * With `pairs` > 1 there are that many such pairs: one pair of a few seconds
 * moved by a third when anything else ran for a moment. Returns each pair's
 * rate, and `around` (if given) runs right before and right after each pair.
 */
async function decodeRates(engine: Engine, streams: number, tokens: number, vocab: number, salt: number, pairs = 1, around?: () => void): Promise<number[]> {
  const rates: number[] = [];
  for (let p = 0; p < pairs; p++) {
    around?.();
    await engine.prepare(streams, SHAPES.promptTokens + tokens + 8);
    const one = await wall(engine, streams, SHAPES.promptTokens, 1, vocab, salt + 2000 * p);
    await engine.prepare(streams, SHAPES.promptTokens + tokens + 8);
    const many = await wall(engine, streams, SHAPES.promptTokens, tokens, vocab, salt + 2000 * p + 1000);
    rates.push(((streams * (tokens - 1)) / (many - one)) * 1000);
    around?.();
  }
  return rates;
}

/** `probe` (optional): the memory bandwidth now, GB/s; it runs around each one-stream decode measurement. */
export async function measure(engine: Engine, vocab: number, log: (line: string) => void, probe?: () => number): Promise<Measurements> {
  // Warm-up: one short request (first touch of the weights, thread start).
  await engine.prepare(1, 64);
  await engine.run(promptIds(8, 999, vocab), 4);

  const probes: number[] = [];
  const rates = await decodeRates(engine, 1, SHAPES.decodeTokens + 1, vocab, 0, SHAPES.decode1Pairs, probe && (() => probes.push(probe())));
  const decode1 = median(rates);
  const decode1Pairs = probe && rates.map((tokPerSecond, p) => ({ tokPerSecond, bandwidthBefore: probes[2 * p]!, bandwidthAfter: probes[2 * p + 1]! }));
  log(`decode1 ${decode1.toFixed(2)} tok/s (${decode1Pairs ? decode1Pairs.map((d) => `${d.tokPerSecond.toFixed(2)} between ${d.bandwidthBefore} and ${d.bandwidthAfter} GB/s`).join('; ') : rates.map((r) => r.toFixed(2)).join(', ')})`);

  await engine.prepare(1, SHAPES.prefillTokens + 8);
  const prefill512 = (SHAPES.prefillTokens / (await wall(engine, 1, SHAPES.prefillTokens, 1, vocab, 1))) * 1000;
  log(`prefill512 ${prefill512.toFixed(2)} tok/s`);

  const agg: Record<string, number> = {};
  for (const streams of [4, 16, 64]) {
    agg[streams] = median(await decodeRates(engine, streams, SHAPES.aggTokens[streams]!, vocab, 10 * streams));
    log(`agg${streams} ${agg[streams]!.toFixed(2)} tok/s`);
  }

  // 16 requests arriving together, one token each: each one's completion is its first token.
  await engine.prepare(16, SHAPES.ttftPrompt + 8);
  const arrived = performance.now();
  const ttfts = await Promise.all(
    Array.from({ length: 16 }, async (_, s) => {
      await engine.run(promptIds(SHAPES.ttftPrompt, 100 + s, vocab), 1);
      return performance.now() - arrived;
    }),
  );
  const ttft16 = { p50: percentile(ttfts, 50), p99: percentile(ttfts, 99) };
  log(`ttft16 p50 ${ttft16.p50.toFixed(0)} ms p99 ${ttft16.p99.toFixed(0)} ms`);
  return { decode1, decode1Pairs, prefill512, agg, ttft16 };
}

/**
 * Decode only (bench/vs-llama-cpp/hybrid.ts): the one-stream decode rate (median
 * of `pairs` measurements) and the aggregate decode rate of 16 streams.
 */
export async function measureDecode(engine: Engine, vocab: number, log: (line: string) => void, pairs = 3): Promise<{ decode1: number; decode1Runs: number[]; agg16: number }> {
  await engine.prepare(1, 64);
  await engine.run(promptIds(8, 999, vocab), 4);
  const decode1Runs = await decodeRates(engine, 1, SHAPES.decodeTokens + 1, vocab, 0, pairs);
  const decode1 = median(decode1Runs);
  log(`decode1 ${decode1.toFixed(2)} tok/s (${decode1Runs.map((r) => r.toFixed(2)).join(', ')})`);
  const agg16 = median(await decodeRates(engine, 16, SHAPES.aggTokens[16]!, vocab, 160));
  log(`agg16 ${agg16.toFixed(2)} tok/s`);
  return { decode1, decode1Runs, agg16 };
}
