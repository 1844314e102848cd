/**
 * StepBatch.blockCopies on the OpenVINO backend (native/openvino/src/runner.cc
 * copy_blocks): a child that shares a parent's full blocks and gets a copy of
 * its partial tail continues exactly like a solo sequence; without the copy it
 * does not (so the check can fail). Then n > 1 end to end on the IR.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StepBatch } from '../../src/backends/backend.js';
import { OpenVinoBackend } from '../../src/backends/openvino/index.js';
import { Pipeline } from '../../src/index.js';
import { IdTokenizer } from '../support/id-tokenizer.js';
import { describeOpenVino, EXACT, TINY_IR } from './helpers.js';

/** One sequence's step: `tokens` at pastLen over `blocks`, every position's logits. */
function step(tokens: number[], pastLen: number, blocks: number[], copies?: number[]): StepBatch {
  return {
    inputIds: Int32Array.from(tokens),
    positions: Int32Array.from(tokens, (_, i) => pastLen + i),
    pastLens: Int32Array.of(pastLen),
    subsequenceBegins: Int32Array.of(0, tokens.length),
    blockIndices: Int32Array.from(blocks),
    blockIndicesBegins: Int32Array.of(0, blocks.length),
    maxContextLen: pastLen + tokens.length,
    logitsIndices: Int32Array.from(tokens, (_, i) => i),
    ...(copies !== undefined && { blockCopies: Int32Array.from(copies) }),
  };
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describeOpenVino('OpenVINO block copies (copy-on-write after a fork)', () => {
  let backend: OpenVinoBackend;
  let blockSize: number;
  beforeAll(async () => {
    backend = await OpenVinoBackend.load(TINY_IR('f32'), { ...EXACT, threads: 2 });
    blockSize = backend.shape.kvBlockSize!;
    await backend.allocateCache({ numBlocks: 12, blockSize, precision: 'f32' });
  });
  afterAll(async () => {
    await backend?.dispose();
  });

  it('a child on shared full blocks and a copied tail block continues like the solo sequence; without the copy it does not', async () => {
    const vocab = backend.shape.vocabSize;
    const prefix = Array.from({ length: 2 * blockSize + 3 }, (_, i) => (i * 37 + 11) % vocab); // two full blocks and a partial one
    const tail = [5, 6, 7];
    await backend.execute(step(prefix, 0, [1, 2, 3])); // the parent fills blocks 1, 2, 3
    const solo = (await backend.execute(step([...prefix, ...tail], 0, [7, 8, 9]))).logits.slice(prefix.length * vocab);
    // The child shares 1 and 2 and gets block 3 copied into 4 before its step writes.
    const child = (await backend.execute(step(tail, prefix.length, [1, 2, 4], [3, 4]))).logits;
    expect(maxAbsDiff(child, solo)).toBeLessThan(1e-4);
    // Block 5 was never written: a child given it without the copy reads other K/V.
    const uncopied = (await backend.execute(step(tail, prefix.length, [1, 2, 5]))).logits;
    expect(maxAbsDiff(uncopied, solo)).toBeGreaterThan(1e-3);
  });

  it('n = 3 through a pipeline on the IR: the prompt forked, each choice equals its solo run with seed + i', async () => {
    const ov = await OpenVinoBackend.load(TINY_IR('f32'), { ...EXACT, threads: 2 });
    const pipe = await Pipeline.create({ backend: ov, tokenizer: new IdTokenizer(ov.shape.vocabSize), kvCache: { size: '4MB', precision: 'f32' } });
    try {
      const prompt = Array.from({ length: 45 }, (_, i) => (i * 13 + 3) % ov.shape.vocabSize);
      const options = { temperature: 1, maxTokens: 16, ignoreEos: true, seed: 70 };
      const result = await pipe.generate(prompt, { ...options, n: 3 });
      expect(pipe.stats().forks).toBe(2);
      for (let i = 0; i < 3; i++) expect(result.choices![i]!.tokenIds).toEqual((await pipe.generate(prompt, { ...options, seed: 70 + i })).tokenIds);
      expect(pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
    } finally {
      await pipe.close();
    }
  });
});
