/**
 * TokenChoice: how one request picks its next token from its row of a step's
 * logits. The engine makes one per request and asks it three things per step:
 * `prepare` while the backend computes (a guided request's mask), `choose`
 * once the logits are there, and `accept` for the token it keeps.
 *
 * Every choice takes one of four paths, decided by the request's options:
 *   argmax     plain greedy, unguided: the backend's pick (StepBatch.argmaxRows)
 *              when it made one, else a scan of the row here;
 *   sampled    the Sampler (temperature, top-k/p, min-p, penalties, logprobs), or
 *              the same chain run by the backend (StepBatch.sampling) when it ran it;
 *   masked     guided, the grammar constrains this token: the row is masked first;
 *   free text  guided, but the grammar reads free text here: drawn as if
 *              unguided, masked and drawn again only if the grammar refuses it.
 *
 * Invariants:
 *  T1. The grammar changes only in `accept`, so the mask `prepare` fills while
 *      the step runs is the mask of the token `choose` picks after it.
 *  T2. The model's numbers are checked before the mask writes its -Infinity
 *      entries: a non-finite row is the model's, never the grammar's.
 *  T3. `choose` never throws for what a model can produce: broken logits are an
 *      error value that fails this request alone. Whatever else it throws is a bug.
 *  T4. `takesArgmax` never changes: the batch asks the backend for exactly the
 *      rows whose choice reads the backend's pick.
 */

import type { StepResult } from '../backends/backend.js';
import { applyMask, type TokenGrammar } from '../guided/grammar.js';
import { NonFiniteLogitsError, Sampler, allFinite, argmax, type SampledToken } from '../sampling/sampler.js';
import type { BackendSampling } from './batch.js';
import type { RequestSpec } from './request.js';
import { err, ok, type Result } from './result.js';

/** Why a request could not choose a token from its row: the model's output is broken (NaN or infinity). */
export interface ChoiceError {
  readonly kind: 'NonFiniteLogits';
  readonly message: string;
}

export class TokenChoice {
  /** The request's sampling state (parameters, seeded RNG, penalty counts); unused on the argmax path. */
  private readonly sampler: Sampler;
  /** Guided generation: the request's own grammar matcher; undefined for unguided requests. */
  private readonly grammar: TokenGrammar | undefined;
  /** Bit t set iff the grammar allows token t next (32 tokens a word); allocated once per guided request. */
  private readonly mask: Uint32Array | undefined;
  /** Whether `prepare` filled `mask` for this step; false in free text, where the token is drawn first and checked. */
  private maskFilled = false;
  /** Whether the token is the argmax of the model's row as is (greedy, no penalties, logprobs or grammar). */
  readonly takesArgmax: boolean;
  /** Whether the backend may run the sampling chain for this request (sampled, unguided): see `backendSampling`. */
  private readonly backendSamples: boolean;
  /** What the backend gets for an unguided request (constant); guided ones get theirs per step. */
  private readonly unguidedSampling: BackendSampling | undefined;
  /** Whether the step in flight asked the backend to sample this guided request's masked row. */
  private maskSent = false;
  /** Whether it asked the backend to draw this guided request's free-text row unmasked (the grammar checks the token here). */
  private freeTextSent = false;
  /**
   * Whether a choice may cost milliseconds (a draw over the whole vocabulary):
   * the engine lets the event loop in between such choices.
   */
  readonly isSlow: boolean;

  /** `endTokenIds`: the tokens that end the request (its stop token ids, EOS unless ignored); a grammar allows them where it may end. */
  constructor(spec: RequestSpec, endTokenIds: Iterable<number>, vocabSize: number) {
    this.sampler = new Sampler(spec.sampling, spec.promptTokenIds);
    if (spec.grammar !== undefined) {
      const ends = [...spec.stop.stopTokenIds, ...(spec.stop.ignoreEos ? [] : endTokenIds)];
      this.grammar = spec.grammar.matcher(ends, spec.skipSpecialTokens === false);
      this.mask = new Uint32Array((vocabSize + 31) >>> 5);
    }
    this.takesArgmax = this.sampler.isPlainGreedy && this.grammar === undefined;
    this.backendSamples = !this.sampler.isPlainGreedy && this.grammar === undefined;
    this.unguidedSampling = this.backendSamples ? { sampler: this.sampler } : undefined;
    this.isSlow = !this.sampler.isPlainGreedy;
  }

  /**
   * Before the step's logits arrive: fills the mask where the grammar constrains
   * the next token. False when the grammar allows no token at all (a dead end).
   */
  prepare(): boolean {
    if (this.grammar === undefined) return true;
    this.maskFilled = !this.grammar.isFreeText();
    return !this.maskFilled || this.grammar.fillMask(this.mask!);
  }

  /**
   * The next token from row `row` of the step's logits (`vocab` values a row).
   * May overwrite that row (masking, penalties); nothing is kept past the call.
   */
  choose(result: StepResult, row: number, vocab: number): Result<SampledToken, ChoiceError> {
    try {
      return ok(this.pick(result, row, vocab));
    } catch (error) {
      if (!(error instanceof NonFiniteLogitsError)) throw error;
      return err({ kind: 'NonFiniteLogits', message: error.message });
    }
  }

  /**
   * What the backend needs to run the sampling chain on this request's row this
   * step (StepBatch.sampling), undefined when it must not: the sampled path of an
   * unguided request; a guided one whose grammar constrains this token, with its
   * mask (filled by `prepare` while the step runs; the grammar only changes in
   * `accept`, so whether it is in free text is known now: T1); one in free text without
   * a mask: the backend draws as if unguided, and `choose` keeps that token if the
   * grammar allows it, else samples the row here from the start (its stream and
   * penalties untouched by the backend's draw), mask and redraw included. Called once per step.
   */
  backendSampling(): BackendSampling | undefined {
    if (this.grammar === undefined) return this.unguidedSampling;
    this.maskSent = !this.grammar.isFreeText();
    this.freeTextSent = !this.maskSent;
    return this.maskSent ? { sampler: this.sampler, mask: this.mask! } : { sampler: this.sampler };
  }

  /** Advances the grammar by the chosen token; false (nothing changes) if the grammar refuses it. */
  accept(token: number): boolean {
    return this.grammar === undefined || this.grammar.acceptToken(token);
  }

  /** Whether the grammar is complete, so nothing more may be generated. */
  get isTerminated(): boolean {
    return this.grammar?.isTerminated() === true;
  }

  private pick(result: StepResult, row: number, vocab: number): SampledToken {
    const { sampler, grammar, mask } = this;
    const { logits } = result;
    const offset = row * vocab;
    if (this.takesArgmax) {
      const picked = result.argmax?.[row] ?? -1;
      const token = picked >= 0 ? picked : argmax(logits, offset, offset + vocab);
      // Greedy reads no other value, so only the chosen one is checked.
      if (!Number.isFinite(logits[offset + token]!)) throw new NonFiniteLogitsError();
      return { token };
    }
    if (grammar === undefined) {
      const sampled = result.sampled;
      const flags = this.backendSamples && sampled !== undefined ? (sampled.flags[row] ?? 0) : 0;
      if ((flags & 1) === 0) return sampler.sample(logits, offset, vocab);
      // The backend ran the chain (StepResult.sampled): the JS sampler's result, computed there.
      if ((flags & 4) !== 0) throw new NonFiniteLogitsError();
      return sampler.takeSampled(sampled!, row, logits, offset);
    }
    if (!this.maskFilled) {
      const sampled = result.sampled;
      if (this.freeTextSent && sampled !== undefined && ((sampled.flags[row] ?? 0) & 1) !== 0) {
        // The unmasked draw was the backend's: the JS sampler's first draw, so if the grammar allows it, it is the token.
        if ((sampled.flags[row]! & 4) !== 0) throw new NonFiniteLogitsError();
        if (grammar.allows(sampled.tokens[row]!)) return sampler.takeSampled(sampled, row, logits, offset);
      }
      return sampler.sample(logits, offset, vocab, {
        check: {
          allows: (token) => grammar.allows(token),
          mask: (values) => {
            grammar.fillMask(mask!);
            applyMask(values, 0, values.length, mask!);
          },
        },
      });
    }
    const sampled = result.sampled;
    if (this.maskSent && sampled !== undefined && ((sampled.flags[row] ?? 0) & 1) !== 0) {
      // The backend checked the raw row (T2), applied the mask, and ran the chain.
      if ((sampled.flags[row]! & 4) !== 0) throw new NonFiniteLogitsError();
      return sampler.takeSampled(sampled, row, logits, offset);
    }
    if (!allFinite(logits.subarray(offset, offset + vocab))) throw new NonFiniteLogitsError(); // T2
    applyMask(logits, offset, vocab, mask!);
    return sampler.isPlainGreedy ? { token: argmax(logits, offset, offset + vocab) } : sampler.sample(logits, offset, vocab, { masked: true });
  }
}

/**
 * What is wrong with a backend's step result for a batch of `rows` logits
 * rows, as token choice reads it: the logits' size, and the backend's argmax
 * picks (one per row, a token id or -1 for "not picked"). Undefined if nothing.
 */
export function resultProblem(result: StepResult, rows: number, vocab: number): string | undefined {
  const expected = rows * vocab;
  if (result.logits.length !== expected) return `backend returned ${result.logits.length} logits, expected ${expected}`;
  const { argmax: picks, sampled } = result;
  if (picks !== undefined && (picks.length !== rows || picks.some((token) => token < -1 || token >= vocab))) {
    return `backend returned an argmax of ${picks.length} values, expected ${rows} in [-1, ${vocab})`;
  }
  if (sampled !== undefined) {
    const { tokens, flags, stats, top, topWidth } = sampled;
    if (tokens.length !== rows || flags.length !== rows || stats.length !== 2 * rows || !(topWidth >= 0) || top.length !== rows * topWidth)
      return `backend returned sampled rows of the wrong shape, expected ${rows} rows`;
    for (let r = 0; r < rows; r++) {
      const token = tokens[r]!;
      const picked = (flags[r]! & 1) !== 0 && (flags[r]! & 4) === 0;
      if (picked ? token < 0 || token >= vocab : token !== -1) return `backend returned a sampled token ${token} for row ${r}, expected ${picked ? `one in [0, ${vocab})` : '-1'}`;
    }
    if (top.some((token) => token < -1 || token >= vocab)) return `backend returned top-logprob tokens outside [-1, ${vocab})`;
  }
  return undefined;
}
