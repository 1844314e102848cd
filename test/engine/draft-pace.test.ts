/** DraftPace and stepDraftBudget (src/engine/draft-pace.ts): S5's length rule, S7's pause and the step's row cap. */
import { describe, expect, it } from 'vitest';
import { DRAFT_ROW_BUDGET, DraftPace, stepDraftBudget } from '../../src/engine/draft-pace.js';

describe('DraftPace', () => {
  it('starts at the configured length, grows by 2 after a draft accepted whole (never past it), shrinks by 1 (to 1) otherwise', () => {
    const pace = new DraftPace(6);
    expect(pace.allowance()).toBe(6);
    pace.record(6, 3);
    expect(pace.allowance()).toBe(5);
    for (let i = 0; i < 10; i++) pace.record(2, 1);
    expect(pace.allowance()).toBe(1);
    pace.record(1, 1);
    expect(pace.allowance()).toBe(3);
    pace.record(3, 3);
    pace.record(5, 5);
    expect(pace.allowance()).toBe(6);
  });

  it('pauses 1, 2, 4, ... 16 decode steps after drafts rejected whole, and resumes at once after an accepted token', () => {
    const pace = new DraftPace(4);
    const pauses: number[] = [];
    for (let round = 0; round < 7; round++) {
      pace.record(1, 0);
      let skipped = 0;
      while (pace.allowance() === 0) skipped++;
      pauses.push(skipped);
    }
    expect(pauses).toEqual([1, 2, 4, 8, 16, 16, 16]);
    pace.record(1, 1); // one accepted token ends the backoff
    pace.record(1, 0);
    let skipped = 0;
    while (pace.allowance() === 0) skipped++;
    expect(skipped).toBe(1);
  });

  it('a step with no draft records nothing', () => {
    const pace = new DraftPace(4);
    pace.record(0, 0);
    expect(pace.allowance()).toBe(4);
  });
});

describe('stepDraftBudget', () => {
  it('fills a step up to DRAFT_ROW_BUDGET rows, and gives none to a large batch or beside a prefill', () => {
    expect(stepDraftBudget([1])).toBe(DRAFT_ROW_BUDGET - 1);
    expect(stepDraftBudget([1, 1, 1])).toBe(DRAFT_ROW_BUDGET - 3);
    expect(stepDraftBudget(new Array(DRAFT_ROW_BUDGET).fill(1))).toBe(0);
    expect(stepDraftBudget(new Array(64).fill(1))).toBe(0);
    expect(stepDraftBudget([1, 300])).toBe(0);
  });
});
