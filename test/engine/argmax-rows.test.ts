/**
 * Greedy picks made by the backend (StepBatch.argmaxRows, StepResult.argmax):
 * the engine asks only for the rows of plain greedy requests, takes the
 * backend's pick for them, and treats a malformed argmax as a failed step.
 */
import { describe, expect, it } from 'vitest';
import type { StepBatch, StepResult } from '../../src/backends/backend.js';
import { kvBytesPerBlock } from '../../src/engine/kv/sizing.js';
import { BackendError } from '../../src/errors.js';
import { Pipeline } from '../../src/create.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';

/** A byte the test backend's logits never favour, so the outputs show whose pick the engine took. */
const PICK = 'Z'.charCodeAt(0);

/** Answers argmaxRows with PICK; `malformed` steps get an argmax one entry short instead. */
class PickingBackend extends TestBackend {
  readonly asked: Uint8Array[] = [];
  malformed = 0;
  override async execute(batch: StepBatch): Promise<StepResult> {
    const result = await super.execute(batch);
    if (batch.argmaxRows === undefined) return result;
    expect(batch.argmaxRows.length).toBe(batch.logitsIndices.length);
    this.asked.push(batch.argmaxRows);
    const argmax = Int32Array.from(batch.argmaxRows, (asked) => (asked ? PICK : -1));
    if (this.malformed > 0) {
      this.malformed--;
      return { ...result, argmax: argmax.subarray(1) };
    }
    return { ...result, argmax };
  }
}

async function pipeline(backend: TestBackend): Promise<Pipeline> {
  return Pipeline.create({ backend, tokenizer: new ByteTokenizer(), kvCache: { size: 200 * kvBytesPerBlock(backend.shape, 'f32', 4), blockSize: 4, precision: 'f32' } });
}

const REQUESTS = [
  { maxTokens: 10, temperature: 0 },
  { maxTokens: 10, temperature: 0.9, seed: 3 },
  { maxTokens: 10, temperature: 0, logprobs: 1 },
  { maxTokens: 10, temperature: 0, repetitionPenalty: 1.3 },
];

async function run(backend: TestBackend): Promise<string[]> {
  const pipe = await pipeline(backend);
  try {
    return (await Promise.all(REQUESTS.map((options, i) => pipe.generate(`prompt ${i}`, { ...options, ignoreEos: true })))).map((r) => r.text);
  } finally {
    await pipe.close();
  }
}

describe('greedy picks from the backend', () => {
  it('are asked for plain greedy rows only, and taken as the next token', async () => {
    const picking = new PickingBackend();
    const [greedy, ...others] = await run(picking);
    expect(greedy).toBe('Z'.repeat(10));
    // Sampling, logprobs and penalties read the logits themselves: as without the backend's picks.
    expect(others).toEqual((await run(new TestBackend())).slice(1));
    expect(picking.asked.length).toBeGreaterThanOrEqual(10);
    for (const rows of picking.asked) expect(rows.reduce((sum, asked) => sum + asked, 0)).toBe(1);
  });

  it('of the wrong size fail that step with a BackendError; the next request is served', async () => {
    const picking = new PickingBackend();
    picking.malformed = 1;
    const pipe = await pipeline(picking);
    try {
      await expect(pipe.generate('first', { maxTokens: 4, temperature: 0 })).rejects.toSatisfy(
        (error) => error instanceof BackendError && /argmax of 0 values, expected 1/.test(error.message),
      );
      expect((await pipe.generate('second', { maxTokens: 4, temperature: 0, ignoreEos: true })).text).toBe('ZZZZ');
    } finally {
      await pipe.close();
    }
  });
});
