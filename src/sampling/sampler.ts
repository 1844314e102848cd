/**
 * Picks the next token of one request from its logits row.
 *
 * Order of processing (as in transformers' and vLLM's samplers): penalties,
 * temperature, then top-k, top-p and min-p on the resulting distribution, then
 * a draw from the request's own Rng. Log probabilities are reported from the
 * raw logits (before penalties and temperature).
 */

import type { SampledRows } from '../backends/backend.js';
import type { SamplingParams } from './params.js';
import { Rng } from './rng.js';
import { selectBest, selectMass } from './selection.js';

export interface TokenLogprob {
  readonly token: number;
  readonly logprob: number;
}

/**
 * Guided free text (docs/guided.md): the token is drawn as if unguided, and only when the
 * grammar refuses it is the row masked and the token drawn again. Without top-k, top-p or
 * min-p that is exactly the masked distribution (rejection sampling), and a reply that never
 * writes a refused token is the unguided reply, token for token.
 */
export interface SampleCheck {
  allows(token: number): boolean;
  /** Sets every token the grammar refuses to -Infinity in `row` (the request's logits row). */
  mask(row: Float32Array): void;
}

export interface SampledToken {
  readonly token: number;
  /** Present when params.logprobs > 0. */
  readonly logprob?: number;
  readonly topLogprobs?: TokenLogprob[];
}

/**
 * Tokens with probability below this fraction of the top one are dropped
 * before sorting for top-p: with a 150k vocabulary they can carry at most
 * ~1.5e-5 of the mass, and skipping them avoids sorting the whole vocabulary.
 */
const NEGLIGIBLE = 1e-10;

export class Sampler {
  private readonly params: SamplingParams;
  private readonly rng: Rng;
  /** Occurrences of each generated token (presence/frequency penalties). */
  private readonly outputCounts = new Map<number, number>();
  /** Every token of prompt and output (repetition penalty). */
  private readonly seen = new Set<number>();
  /** `seen` as a list, in insertion order (what a backend that samples gets). */
  private readonly seenList: number[] = [];
  /** log of the candidates' floor (draw): the value a backend that samples gets, computed by this runtime's Math.log. */
  private readonly logFloor: number;
  private readonly penalised: boolean;
  /**
   * Plain greedy (no penalties, no logprobs): the token is the row's argmax and
   * sampling keeps no state, so a caller may take argmax itself and skip `sample`.
   */
  readonly isPlainGreedy: boolean;

  constructor(params: SamplingParams, promptTokenIds: readonly number[]) {
    this.params = params;
    this.rng = new Rng(params.seed);
    const { repetitionPenalty, presencePenalty, frequencyPenalty } = params;
    this.penalised = repetitionPenalty !== 1 || presencePenalty !== 0 || frequencyPenalty !== 0;
    this.isPlainGreedy = (params.temperature === 0 || params.topK === 1) && params.logprobs === 0 && !this.penalised;
    if (params.repetitionPenalty !== 1) for (const token of promptTokenIds) this.see(token);
    this.logFloor = Math.max(Math.log(NEGLIGIBLE), params.minP > 0 ? Math.log(params.minP) : -Infinity);
  }

  /**
   * Writes this request's row of StepBatch.sampling's parameters (SAMPLING_PARAMS
   * in src/backends/backend.ts) at params[at..]: what a backend needs to run
   * `sample` on the row itself, the next random number of the stream included.
   */
  writeParams(params: Float64Array, at: number): void {
    const p = this.params;
    params[at] = p.temperature;
    params[at + 1] = p.topK;
    params[at + 2] = p.topP;
    params[at + 3] = p.minP;
    params[at + 4] = p.repetitionPenalty;
    params[at + 5] = p.presencePenalty;
    params[at + 6] = p.frequencyPenalty;
    params[at + 7] = p.logprobs;
    params[at + 8] = this.logFloor;
    params[at + 9] = this.rng.peek();
  }

  /** The tokens the repetition penalty applies to, each once (none when it is off). */
  get seenTokens(): readonly number[] {
    return this.seenList;
  }

  /** The generated tokens and their counts, for the presence / frequency penalties (none when they are off). */
  get outputTokenCounts(): ReadonlyMap<number, number> {
    return this.params.presencePenalty !== 0 || this.params.frequencyPenalty !== 0 ? this.outputCounts : EMPTY_COUNTS;
  }

  /**
   * Takes the token a backend sampled for this request from row `row` of a step
   * (StepResult.sampled), as `sample` would have: the stream advances if the
   * draw used its number, the penalties count the token, and the log
   * probabilities come from the raw logits (logits[offset ..]) and the backend's sums.
   */
  takeSampled(sampled: SampledRows, row: number, logits: Float32Array, offset: number): SampledToken {
    const token = sampled.tokens[row]!;
    if ((sampled.flags[row]! & 2) !== 0) this.rng.next();
    this.record(token);
    const n = this.params.logprobs;
    if (n === 0) return { token };
    const logSumExp = sampled.stats[2 * row]! + Math.log(sampled.stats[2 * row + 1]!);
    const top: TokenLogprob[] = [];
    for (let j = 0; j < n; j++) {
      const t = sampled.top[row * sampled.topWidth + j]!;
      if (t < 0) break;
      top.push({ token: t, logprob: logits[offset + t]! - logSumExp });
    }
    return { token, logprob: logits[offset + token]! - logSumExp, topLogprobs: top };
  }

  private see(token: number): void {
    if (this.seen.has(token)) return;
    this.seen.add(token);
    this.seenList.push(token);
  }

  /**
   * Samples from logits[offset .. offset + vocab). May modify that row. `masked`: guided
   * generation already checked the row and set the tokens its grammar forbids to -Infinity.
   */
  sample(logits: Float32Array, offset: number, vocab: number, options?: { readonly masked?: boolean; readonly check?: SampleCheck }): SampledToken {
    const { temperature, topK, logprobs } = this.params;
    const greedy = temperature === 0 || topK === 1;
    const check = options?.check;
    if (this.isPlainGreedy && check === undefined) {
      // The hot path of greedy decoding: no copies.
      return { token: argmax(logits, offset, offset + vocab) };
    }
    const row = logits.subarray(offset, offset + vocab);
    if (options?.masked !== true && !allFinite(row)) throw new NonFiniteLogitsError();
    const reported = logprobs > 0 ? topLogprobs(row, logprobs) : undefined;
    this.applyPenalties(row);
    let token = greedy ? argmax(row, 0, vocab) : this.draw(row);
    if (check !== undefined && !check.allows(token)) {
      check.mask(row);
      token = greedy ? argmax(row, 0, vocab) : this.draw(row);
    }
    this.record(token);
    if (reported === undefined) return { token };
    return { token, logprob: reported.row[token]! - reported.logSumExp, topLogprobs: reported.top };
  }

  private record(token: number): void {
    if (!this.penalised) return;
    this.outputCounts.set(token, (this.outputCounts.get(token) ?? 0) + 1);
    if (this.params.repetitionPenalty !== 1) this.see(token);
  }

  private applyPenalties(row: Float32Array): void {
    const { repetitionPenalty, presencePenalty, frequencyPenalty } = this.params;
    if (repetitionPenalty !== 1) {
      for (const token of this.seen) {
        const value = row[token]!;
        row[token] = value > 0 ? value / repetitionPenalty : value * repetitionPenalty;
      }
    }
    if (presencePenalty !== 0 || frequencyPenalty !== 0) {
      for (const [token, count] of this.outputCounts) row[token]! -= presencePenalty + frequencyPenalty * count;
    }
  }

  private draw(row: Float32Array): number {
    const { temperature, topK, topP, minP } = this.params;
    let max = -Infinity;
    for (let i = 0; i < row.length; i++) if (row[i]! > max) max = row[i]!;
    // Extreme penalties can push a logit to +-infinity in float32 (1 / 1e-39):
    // the weights below would be NaN, so the most likely token is the choice.
    if (!Number.isFinite(max)) return argmax(row, 0, row.length);
    // Candidates with their unnormalised probabilities exp((l - max) / T); the most likely has weight 1.
    // minP keeps a best prefix (weights >= minP), so it can be applied first; top-k and top-p then
    // shorten that prefix by partial selection (selection.ts), never by sorting the vocabulary.
    const floor = this.logFloor * temperature + max;
    const { ids, weights } = scratch(row.length);
    let n = 0;
    for (let i = 0; i < row.length; i++) {
      const logit = row[i]!;
      if (logit < floor) continue;
      const weight = Math.exp((logit - max) / temperature);
      if (weight < minP) continue;
      ids[n] = i;
      weights[n] = weight;
      n++;
    }
    if (n === 0) return argmax(row, 0, row.length);
    if (topK > 0 && n > topK) n = selectBest(ids, weights, n, topK);
    let total = 0;
    for (let i = 0; i < n; i++) total += weights[i]!;
    if (topP < 1) {
      n = selectMass(ids, weights, n, topP * total);
      total = 0;
      for (let i = 0; i < n; i++) total += weights[i]!;
    }
    // Filters that together keep no weight fall back to the most likely token.
    if (!(total > 0)) return argmax(row, 0, row.length);
    let threshold = this.rng.next() * total;
    for (let i = 0; i < n; i++) {
      threshold -= weights[i]!;
      if (threshold < 0) return ids[i]!;
    }
    return ids[n - 1]!;
  }
}

const EMPTY_COUNTS: ReadonlyMap<number, number> = new Map();

/** Candidate buffers shared by every sampler (sampling is synchronous): no per-call allocation of vocabulary-sized arrays. */
let scratchIds = new Int32Array(0);
let scratchWeights = new Float64Array(0);
function scratch(size: number): { ids: Int32Array; weights: Float64Array } {
  if (scratchIds.length < size) {
    scratchIds = new Int32Array(size);
    scratchWeights = new Float64Array(size);
  }
  return { ids: scratchIds, weights: scratchWeights };
}

/**
 * A logits row with NaN or an infinity: the model's output is broken, so the
 * request that would sample from it fails (the engine turns this into a
 * BackendError for that request alone).
 */
export class NonFiniteLogitsError extends Error {
  constructor() {
    super('the model produced non-finite logits (NaN or infinity); the weights or the config (e.g. rope_theta) are broken');
  }
}

/** Whether no value of `row` is NaN or infinite. */
export function allFinite(row: Float32Array): boolean {
  for (let i = 0; i < row.length; i++) if (!Number.isFinite(row[i]!)) return false;
  return true;
}

/**
 * Index (relative to `begin`) of the largest of values[begin..end); the first on ties, as torch.argmax.
 * NaN entries are never chosen, except a NaN at `begin`, which wins.
 *
 * Greedy decoding runs this over every row of every step, so the scan asks one
 * question per eight values ("does any beat the best so far?"), which is almost
 * always no once a large logit has been seen, and only then looks at them one
 * by one. Comparisons with NaN are false, as in the plain scan.
 */
export function argmax(values: Float32Array, begin: number, end: number): number {
  let best = begin;
  let bestValue = values[begin]!;
  let i = begin + 1;
  for (; i + 8 <= end; i += 8) {
    if (
      values[i]! > bestValue ||
      values[i + 1]! > bestValue ||
      values[i + 2]! > bestValue ||
      values[i + 3]! > bestValue ||
      values[i + 4]! > bestValue ||
      values[i + 5]! > bestValue ||
      values[i + 6]! > bestValue ||
      values[i + 7]! > bestValue
    ) {
      for (let j = i; j < i + 8; j++) {
        const value = values[j]!;
        if (value > bestValue) {
          bestValue = value;
          best = j;
        }
      }
    }
  }
  for (; i < end; i++) {
    const value = values[i]!;
    if (value > bestValue) {
      bestValue = value;
      best = i;
    }
  }
  return best - begin;
}

function topLogprobs(row: Float32Array, n: number): { row: Float32Array; logSumExp: number; top: TokenLogprob[] } {
  const copy = Float32Array.from(row);
  let max = -Infinity;
  for (const value of copy) if (value > max) max = value;
  let sum = 0;
  for (const value of copy) sum += Math.exp(value - max);
  const logSumExp = max + Math.log(sum);
  // Keep the n best with a small insertion list: n is small, the vocabulary large.
  const best: TokenLogprob[] = [];
  for (let token = 0; token < copy.length; token++) {
    const logprob = copy[token]! - logSumExp;
    if (best.length === n && logprob <= best[n - 1]!.logprob) continue;
    let at = best.length;
    while (at > 0 && best[at - 1]!.logprob < logprob) at--;
    best.splice(at, 0, { token, logprob });
    if (best.length > n) best.pop();
  }
  return { row: copy, logSumExp, top: best };
}
