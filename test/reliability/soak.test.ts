// The seed's workload, short: `npm run soak -- --requests 10000` is the long one.
import { expect, it } from 'vitest';
import { runSoak } from './soak.js';

it('16 streams over a cache that fits two, with aborts and abandoned streams: no crash, no leak, no mismatch', async () => {
  const summary = await runSoak({ requests: 120, seed: 7, timeLimitMs: 60_000 });
  console.log(`soak: ${JSON.stringify(summary)}`);
  expect(summary.requests).toBe(120);
  expect(summary).toMatchObject({ crashes: 0, leakedBlocks: 0, mismatches: 0, unsettled: 0 });
  expect(summary.preemptions).toBeGreaterThan(0);
  expect(summary.aborted + summary.abandoned).toBeGreaterThan(0);
  expect(summary.completed).toBeGreaterThan(60);
}, 120_000);

it('the same on a hybrid model (two cache pools): no crash, no leak, no mismatch', async () => {
  const summary = await runSoak({ requests: 120, seed: 11, timeLimitMs: 60_000, hybrid: true });
  console.log(`soak (hybrid): ${JSON.stringify(summary)}`);
  expect(summary.cachedPromptTokens).toBeGreaterThan(0); // repeated prompts resumed from checkpoints
  expect(summary.requests).toBe(120);
  expect(summary).toMatchObject({ crashes: 0, leakedBlocks: 0, mismatches: 0, unsettled: 0 });
  expect(summary.preemptions).toBeGreaterThan(0);
  expect(summary.aborted + summary.abandoned).toBeGreaterThan(0);
  expect(summary.completed).toBeGreaterThan(60);
}, 120_000);
