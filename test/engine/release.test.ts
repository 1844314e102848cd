/**
 * The engine hands each step's result back (Backend.release) once it has
 * sampled every row, and never reads it afterwards: a backend that poisons
 * released logits with NaN gives the same outputs as one that does not.
 */
import { describe, expect, it } from 'vitest';
import type { StepBatch, StepResult } from '../../src/backends/backend.js';
import { kvBytesPerBlock } from '../../src/engine/kv/sizing.js';
import { Pipeline } from '../../src/create.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';

class PoisoningBackend extends TestBackend {
  executed = 0;
  released = new Set<StepResult>();
  override async execute(batch: StepBatch): Promise<StepResult> {
    this.executed++;
    return super.execute(batch);
  }
  release(result: StepResult): void {
    expect(this.released.has(result)).toBe(false); // once per result
    this.released.add(result);
    result.logits.fill(Number.NaN);
  }
}

async function run(backend: TestBackend): Promise<number[][]> {
  const pipe = await Pipeline.create({ backend, tokenizer: new ByteTokenizer(), kvCache: { size: 200 * kvBytesPerBlock(backend.shape, 'f32', 4), blockSize: 4, precision: 'f32' } });
  try {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        pipe.generate(`prompt ${i} ${'ab'.repeat(i)}`, i % 2 === 0 ? { maxTokens: 12, temperature: 0 } : { maxTokens: 12, temperature: 0.9, topP: 0.9, seed: i, logprobs: 2 }),
      ),
    );
    return results.map((r) => r.tokenIds);
  } finally {
    await pipe.close();
  }
}

describe('Backend.release', () => {
  it('is called once per step, after the step is sampled, and nothing reads the result afterwards', async () => {
    const poisoning = new PoisoningBackend();
    const outputs = await run(poisoning);
    expect(outputs).toEqual(await run(new TestBackend()));
    expect(outputs.every((ids) => ids.length === 12)).toBe(true);
    expect(poisoning.executed).toBeGreaterThanOrEqual(12);
    expect(poisoning.released.size).toBe(poisoning.executed);
  });
});
