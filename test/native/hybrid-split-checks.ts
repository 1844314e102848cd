/**
 * The split invariance of a hybrid model's prefill, bit for bit: a prompt
 * prefilled in one step and in steps of 1, 7 and 64 tokens leaves the same
 * linear state (read back through the logits of the decode steps that follow,
 * which depend on nothing else that the split could change) and gives the same
 * logits. The Gated DeltaNet kernels run a sequence's tokens in order, one at
 * a time (kernels/linear/gated_delta.h), so the engine may cut a prompt
 * anywhere. And in each set the greedy ids and first logits stay transformers'. Run by hybrid-split.test.ts in the process's own kernel set and by
 * the forked -avx2 / -baseline files with the set forced.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { LINEAR_STATE_POOL } from '../../src/backends/cpu/cpu-backend.js';
import { argmax, buildBatch, contiguousBlocks, maxAbsDiff, readReference, REPO_ROOT } from './helpers.js';

const FIXTURES = ['qwen35-tiny', 'qwen3next-tiny'];
const BLOCK_SIZE = 16;
const DECODE_STEPS = 8;

/** The logits after the prompt and after each of DECODE_STEPS greedy decode steps, one Float32Array. */
async function prefillThenDecode(backend: CpuBackend, prompt: readonly number[], chunk: number, blocks: number[]): Promise<Float32Array> {
  const vocab = backend.shape.vocabSize;
  const all = new Float32Array(vocab * (1 + DECODE_STEPS));
  let past = 0;
  while (past < prompt.length) {
    const tokens = prompt.slice(past, past + Math.min(chunk, prompt.length - past));
    const last = past + tokens.length === prompt.length;
    const out = await backend.execute(buildBatch([{ tokens, pastLen: past, blocks, logits: last ? 'last' : 'none', stateSlot: 1 }]));
    if (last) all.set(out.logits.subarray(0, vocab), 0);
    past += tokens.length;
  }
  for (let step = 1; step <= DECODE_STEPS; step++) {
    const next = argmax(all.subarray((step - 1) * vocab, step * vocab));
    const out = await backend.execute(buildBatch([{ tokens: [next], pastLen: past, blocks, stateSlot: 1 }]));
    all.set(out.logits.subarray(0, vocab), step * vocab);
    past += 1;
  }
  return all;
}

/** The checks, for `expectKernels` to confirm which kernel set ran. */
export function hybridSplitChecks(expectKernels: (kernels: string | undefined) => void): void {
  describe.each(FIXTURES)('%s', (name) => {
    const dir = join(REPO_ROOT, 'test', 'fixtures', name);
    const cases = (readReference(dir) as unknown as { cases: Array<{ prompt_ids: number[]; greedy_ids: number[]; first_logits: number[] }> }).cases;
    const longest = cases.reduce((a, c) => (c.prompt_ids.length > a.prompt_ids.length ? c : a));
    const prompt = longest.prompt_ids;
    const blocks = contiguousBlocks(1, Math.ceil((prompt.length + DECODE_STEPS) / BLOCK_SIZE));
    let backend: CpuBackend;
    let whole: Float32Array;
    beforeAll(async () => {
      backend = await CpuBackend.load(dir, { threads: 2 });
      await backend.allocateCache({ numBlocks: blocks.length + 1, blockSize: BLOCK_SIZE, precision: 'f32', extraPoolBlocks: { [LINEAR_STATE_POOL]: 2 } });
      expectKernels(backend.kernels);
      whole = await prefillThenDecode(backend, prompt, Infinity, blocks);
    });
    afterAll(async () => backend.dispose());

    it(`in this kernel set, transformers' greedy ids and first logits (within 3e-4, hybrid-model.test.ts's widest bound)`, () => {
      const vocab = backend.shape.vocabSize;
      const ids = Array.from({ length: 1 + DECODE_STEPS }, (_, i) => argmax(whole.subarray(i * vocab, (i + 1) * vocab)));
      expect(ids).toEqual(longest.greedy_ids.slice(0, 1 + DECODE_STEPS));
      expect(maxAbsDiff(whole.subarray(0, vocab), longest.first_logits)).toBeLessThan(3e-4);
    });

    it.each([1, 7, 64])(`a ${prompt.length}-token prompt in steps of %i tokens: the same logits, bit for bit, after it and ${DECODE_STEPS} decode steps`, async (chunk) => {
      expect(prompt.length).toBeGreaterThan(64);
      const split = await prefillThenDecode(backend, prompt, chunk, blocks);
      expect(Buffer.from(split.buffer).equals(Buffer.from(whole.buffer))).toBe(true);
    });
  });
}
