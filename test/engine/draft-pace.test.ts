/**
 * DraftPace (speculative.ts): a request's draft length (S5) and its pauses
 * after drafts rejected whole (S7), step by step.
 */
import { describe, expect, it } from 'vitest';
import { DraftPace, MAX_DRAFT_PAUSE } from '../../src/engine/speculative.js';

/** The draft lengths of `steps` decode steps, each verified with `accepted(step, length)` tokens kept. */
function lengths(pace: DraftPace, steps: number, accepted: (step: number, length: number) => number): number[] {
  const out: number[] = [];
  for (let step = 0; step < steps; step++) {
    const length = pace.draftLength();
    out.push(length);
    if (length > 0) pace.verified(length, accepted(step, length));
  }
  return out;
}

describe('DraftPace', () => {
  it('grows a draft by 2 while drafts are accepted whole, to the configured most, and shrinks it by 1 otherwise (S5)', () => {
    const pace = new DraftPace(6);
    expect(lengths(pace, 3, (_, length) => length - 1)).toEqual([6, 5, 4]);
    expect(lengths(pace, 3, (_, length) => length)).toEqual([3, 5, 6]);
    // Down to 1; a draft of 1 rejected is rejected whole: a pause (S7).
    expect(lengths(pace, 8, (_, length) => Math.min(1, length - 1))).toEqual([6, 5, 4, 3, 2, 1, 0, 1]);
  });

  it('pauses 1, 2, 4 ... steps after drafts rejected whole in a row, at most MAX_DRAFT_PAUSE (S7)', () => {
    const pace = new DraftPace(4);
    const seen = lengths(pace, 80, () => 0);
    // Draft steps, then the run of paused steps after each.
    const pauses: number[] = [];
    for (let i = 0; i < seen.length; i++) {
      if (seen[i] === 0) continue;
      let j = i + 1;
      while (j < seen.length && seen[j] === 0) j++;
      if (j < seen.length) pauses.push(j - i - 1);
    }
    expect(pauses.slice(0, 6)).toEqual([1, 2, 4, 8, 16, 16]);
    expect(Math.max(...pauses)).toBe(MAX_DRAFT_PAUSE);
    // The lengths shrank meanwhile (S5): 4, 3, 2, 1, 1, ...
    expect(seen.filter((length) => length > 0).slice(0, 5)).toEqual([4, 3, 2, 1, 1]);
  });

  it('drafts every step again once a draft token is accepted, and the next whole rejection pauses 1 step', () => {
    const pace = new DraftPace(4);
    lengths(pace, 20, () => 0); // pauses grown to 8 or more
    let step = 0;
    while (pace.draftLength() === 0) step++;
    expect(step).toBeGreaterThan(1);
    pace.verified(1, 1); // accepted
    expect(lengths(pace, 3, () => 1)).toEqual([3, 2, 1]); // partly accepted, then a draft of 1 accepted whole
    pace.verified(3, 0);
    expect([pace.draftLength(), pace.draftLength()]).toEqual([0, 2]);
  });
});
