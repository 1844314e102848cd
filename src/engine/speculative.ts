/**
 * Speculative decoding by prompt lookup: guess a request's next tokens from
 * its own history, then let one step verify them (docs/speculative.md).
 *
 * A request that decodes (one pending token) gets a draft: the tokens that
 * followed the latest earlier occurrence of its last `ngram` tokens, in its
 * prompt or its output, up to `tokens` of them. The scheduler appends the
 * draft to the pending token as one chunk of the sequence; the step returns a
 * row for each of the chunk's positions; the engine keeps the drafted tokens
 * the request itself picks, in order, up to the first it does not, plus its
 * token after them, and rolls the KV cache back over the rest
 * (KvCacheManager.truncate, K7). Guided requests (a grammar) do not
 * speculate: their mask is filled for one row a step (TokenChoice.prepare).
 *
 * Invariants:
 *  S1. Greedy exactness: a greedy request's every token kept is the argmax of
 *      a row computed over exactly the tokens before it. Since a row depends
 *      only on its sequence's history (never on the batch or the chunking:
 *      the backend contract), the output is token for token the output
 *      without speculation.
 *  S2. A draft never reaches past the request's length limit: a verify step
 *      yields at most lengthLimit - tokens.length new tokens, and the engine
 *      emits a kept run token by token, so a stop token, stop string or
 *      maxTokens inside it ends the request there.
 *  S3. After a step, a request's cache holds exactly its computed tokens:
 *      the rejected draft positions are truncated before anything else
 *      allocates (drafts live only in the plan of one step; a preempted or
 *      aborted request's draft is dropped with its blocks).
 *  S4. Speculation never preempts or starves: a draft that does not fit in
 *      the cache or the step's token budget, leaving a token and a block for
 *      each running request after it, is shortened or dropped, and the
 *      request is scheduled as without one.
 *  S5. Draft length adapts per request (as Hugging Face's assisted
 *      generation does): starting at `tokens`, 2 more after a draft accepted
 *      whole, 1 fewer (at least 1) after one that was not, never above
 *      `tokens`. It changes how many tokens a step verifies, never which
 *      tokens are output (S1, S6).
 *  S7. Drafting pays only where verifying is cheap (a step of few rows reads
 *      each weight once for all of them). A request whose draft was rejected
 *      whole drafts again only after a pause of 1 decode step, doubling with
 *      each further whole rejection in a row (at most MAX_DRAFT_PAUSE), and
 *      none once any draft token is accepted; a step verifies drafts only
 *      while its rows (one per running request, plus the draft tokens) stay
 *      within scheduler.speculativeRows (the scheduler, S4's order). Like S5,
 *      this changes which steps verify, never which tokens are output.
 *  S6. Sampled exactness (the rejection rule of Leviathan et al. 2023 and
 *      Chen et al. 2023 for a deterministic draft). A sampled request draws
 *      the token at each verified row, in order, with its own sampler (the JS
 *      one, never the backend's: StepBatch.sampling is not asked for it) from
 *      the full chain (penalties over the tokens kept so far, temperature,
 *      top-k / top-p / min-p) and the next number u of its stream; the draft
 *      token d is accepted iff the drawn token is d, and the first drawn token
 *      that is not d is kept in its place. The draw is the inverse CDF of p at
 *      u, in an order that depends on the row alone (selection.ts), so
 *      P(accept) = p(d), and given a rejection the token is distributed as p
 *      with d removed and renormalised, the residual norm(max(0, p - q)) for
 *      q one-hot on d: the rule, realised with one uniform per output token.
 *      So the stream is consumed exactly as without speculation, one number
 *      per token output, in output order, whatever the drafts were: the same
 *      seed gives the same output alone, batched, preempted, with or without
 *      speculation (where the backend's own draw equals the JS sampler's, as
 *      the CPU backend's does), and the output's distribution is the
 *      target's.
 */

/** `speculative` of a request or pipeline: prompt lookup (n-gram) drafting. */
export interface SpeculativeConfig {
  readonly method: 'prompt-lookup';
  /** Most draft tokens verified per step (k). */
  readonly tokens: number;
  /** Length of the suffix matched against the prompt and output (n). */
  readonly ngram: number;
}

/**
 * Up to `max` tokens that followed the latest earlier occurrence of the last
 * `ngram` tokens of `tokens` (prompt and output so far); empty if none.
 */
export function lookupDraft(tokens: readonly number[], ngram: number, max: number): number[] {
  const length = tokens.length;
  if (max <= 0 || length <= ngram) return [];
  const suffix = length - ngram;
  // Latest first: the continuation nearest the end best predicts what comes next.
  for (let start = suffix - 1; start >= 0; start--) {
    let j = 0;
    while (j < ngram && tokens[start + j] === tokens[suffix + j]) j++;
    if (j < ngram) continue;
    const from = start + ngram;
    return tokens.slice(from, Math.min(from + max, length));
  }
  return [];
}

/** Longest pause (decode steps without a draft) after drafts rejected whole in a row (S7). */
export const MAX_DRAFT_PAUSE = 16;

/**
 * How long a request's next draft may be (S5) and whether it drafts at all in
 * a step (S7), from how its drafts fared. One per speculating request.
 */
export class DraftPace {
  /** Most tokens the next draft may have: grows by 2 after a draft accepted whole, shrinks by 1 (to 1) otherwise. */
  private limit: number;
  /** Decode steps left without a draft. */
  private pauseLeft = 0;
  /** The pause after the next whole rejection: doubles with each one in a row, back to 1 after an acceptance. */
  private nextPause = 1;

  constructor(private readonly maxTokens: number) {
    this.limit = maxTokens;
  }

  /** The most draft tokens this decode step may propose (0 while paused); call once per decode step. */
  draftLength(): number {
    if (this.pauseLeft > 0) {
      this.pauseLeft--;
      return 0;
    }
    return this.limit;
  }

  /** A draft of `drafted` tokens was verified and its first `accepted` kept. */
  verified(drafted: number, accepted: number): void {
    this.limit = accepted === drafted ? Math.min(this.maxTokens, this.limit + 2) : Math.max(1, this.limit - 1);
    if (accepted > 0) {
      this.nextPause = 1;
      return;
    }
    this.pauseLeft = this.nextPause;
    this.nextPause = Math.min(MAX_DRAFT_PAUSE, 2 * this.nextPause);
  }
}

/** Drafted and accepted token counts (a request's, or the engine's in all). */
export interface SpeculativeCounts {
  /** Draft tokens sent to verification. */
  readonly drafted: number;
  /** Draft tokens the model confirmed (each one a token gained without its own step). */
  readonly accepted: number;
}
