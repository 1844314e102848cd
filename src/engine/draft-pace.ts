/**
 * How much a speculating request drafts from step to step (speculative.ts,
 * S5 and S7): the draft length adapts to how much of the last draft was
 * accepted, drafting pauses after drafts nothing of which was accepted, and
 * a step's drafts are capped by how many rows the step already computes.
 *
 * Why: a verify step of k + 1 rows costs more than a one-row step
 * (docs/speculative.md); a draft pays only when enough of it is accepted,
 * and only while a step is bound by reading the weights rather than by
 * computing rows. None of this changes which tokens are output (S1, S6):
 * it changes how many a step verifies.
 */

/** A step already computing this many rows gains little from more: drafts only fill the rows up to it. */
export const DRAFT_ROW_BUDGET = 8;

/** The longest pause (in decode steps) after drafts that were rejected whole. */
const MAX_PAUSE = 16;

/** One request's drafting state. */
export class DraftPace {
  /** Most tokens the next draft may have (S5): +2 after a draft accepted whole, -1 (at least 1) after one that was not. */
  private limit: number;
  /** Decode steps left without a draft (S7). */
  private pause = 0;
  /** The pause the next wholly rejected draft starts: 1, 2, 4, ... up to MAX_PAUSE; back to 0 once a draft token is accepted. */
  private backoff = 0;

  /** `max`: the request's configured draft length (`speculative.tokens`). */
  constructor(private readonly max: number) {
    this.limit = max;
  }

  /** How many tokens this decode step may draft: 0 while paused (the pause counts down), else the current limit. */
  allowance(): number {
    if (this.pause > 0) {
      this.pause--;
      return 0;
    }
    return this.limit;
  }

  /** After a verify step: `accepted` of `drafted` draft tokens were confirmed. */
  record(drafted: number, accepted: number): void {
    if (drafted <= 0) return;
    this.limit = accepted === drafted ? Math.min(this.max, this.limit + 2) : Math.max(1, this.limit - 1);
    if (accepted > 0) this.backoff = 0;
    else {
      this.backoff = Math.min(MAX_PAUSE, this.backoff === 0 ? 1 : this.backoff * 2);
      this.pause = this.backoff;
    }
  }
}

/**
 * A step's draft allowance: rows the step may add for drafts, given the rows
 * its running requests compute without them (one per decoding request, the
 * pending tokens of a prefilling one). 0 once the step is already past
 * DRAFT_ROW_BUDGET rows: a large batch or a prefill makes it compute-bound.
 */
export function stepDraftBudget(pendingRows: readonly number[]): number {
  let rows = 0;
  for (const pending of pendingRows) rows += pending;
  return Math.max(0, DRAFT_ROW_BUDGET - rows);
}
