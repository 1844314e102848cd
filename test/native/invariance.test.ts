// Paging and batching invariance at the backend level: a sequence's logits do
// not depend on where its blocks lie, what else is in the batch, how its prompt
// was chunked, or how many threads run the step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import {
  buildBatch,
  contiguousBlocks,
  maxAbsDiff,
  readReference,
  referenceModels,
  row,
  shuffledBlocks,
  type SeqStep,
} from './helpers.js';

const BLOCK_SIZE = 4; // small, so sequences span many blocks and chunks cross block edges
const TOLERANCE = 1e-5;

function maxAbs(values: Float32Array): number {
  return values.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if ((values[i] as number) > (values[best] as number)) best = i;
  return best;
}

for (const { name, dir } of referenceModels()) {
  // Sequences: each reference prompt followed by part of its greedy continuation.
  const reference = readReference(dir);
  const sequences = reference.cases.map((c, i) => [...c.prompt_ids, ...c.greedy_ids.slice(0, 9 + 3 * i)]);
  const blocksPerSeq = sequences.map((s) => Math.ceil(s.length / BLOCK_SIZE));
  const totalBlocks = blocksPerSeq.reduce((a, b) => a + b, 0);

  describe.each(['f32', 'f16', 'u8'] as const)(`${name}: paging and batching invariance, %s KV`, (precision) => {
    let backend: CpuBackend;
    let vocab: number;
    /** Logits of every position of every sequence, each run alone in one step. */
    let solo: Float32Array[];

    beforeAll(async () => {
      backend = await CpuBackend.load(dir, { threads: 2 });
      vocab = backend.shape.vocabSize;
      await backend.allocateCache({ numBlocks: totalBlocks + 1, blockSize: BLOCK_SIZE, precision });
      solo = [];
      for (const [k, tokens] of sequences.entries()) {
        const out = await backend.execute(
          buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, blocksPerSeq[k] as number), logits: 'all' }]),
        );
        expect(out.logits.length).toBe(tokens.length * vocab);
        solo.push(out.logits);
      }
    });
    afterAll(async () => backend.dispose());

    /** Non-contiguous block tables for all sequences, from one shuffled pool of blocks. */
    const shuffledTables = (seed: number): number[][] => {
      const pool = shuffledBlocks(1, totalBlocks + 1, seed);
      return blocksPerSeq.map((n) => pool.splice(0, n));
    };

    const expectSolo = (k: number, position: number, logits: Float32Array) => {
      const expected = row(solo[k] as Float32Array, position, vocab);
      expect(maxAbsDiff(logits, expected), `sequence ${k} position ${position}`).toBeLessThanOrEqual(TOLERANCE);
    };

    it('all sequences in one batch with shuffled block tables give their solo logits', async () => {
      const tables = shuffledTables(7);
      const out = await backend.execute(
        buildBatch(sequences.map((tokens, k) => ({ tokens, pastLen: 0, blocks: tables[k] as number[], logits: 'all' }))),
      );
      let r = 0;
      for (const [k, tokens] of sequences.entries())
        for (let p = 0; p < tokens.length; p++) expectSolo(k, p, row(out.logits, r++, vocab));
    });

    it('chunked prefill mixed with decode steps, in one batch, gives the solo logits', async () => {
      const tables = shuffledTables(11);
      const done = sequences.map(() => 0);
      // Each sequence advances by its own chunk size per step (1 = decode-like).
      const chunk = sequences.map((_, k) => [3, 1, 5, 2, 7][k % 5] as number);
      for (let step = 0; done.some((d, k) => d < (sequences[k] as number[]).length); step++) {
        const parts: Array<{ k: number; step: SeqStep }> = [];
        for (const [k, tokens] of sequences.entries()) {
          const n = Math.min(chunk[k] as number, tokens.length - (done[k] as number));
          // Sequences skip some steps, so the batch composition keeps changing.
          if (n === 0 || (step + k) % 3 === 2) continue;
          parts.push({ k, step: { tokens: tokens.slice(done[k], (done[k] as number) + n), pastLen: done[k] as number, blocks: tables[k] as number[], logits: 'all' } });
        }
        if (parts.length === 0) continue;
        const out = await backend.execute(buildBatch(parts.map((p) => p.step)));
        let r = 0;
        for (const { k, step: s } of parts) {
          for (let i = 0; i < s.tokens.length; i++) expectSolo(k, s.pastLen + i, row(out.logits, r++, vocab));
          done[k] = (done[k] as number) + s.tokens.length;
        }
      }
    });

    it('only the rows in logitsIndices get logits, in ascending order', async () => {
      const tables = shuffledTables(3);
      const batch = buildBatch(sequences.map((tokens, k) => ({ tokens, pastLen: 0, blocks: tables[k] as number[], logits: k % 2 === 0 ? 'last' : 'none' })));
      const out = await backend.execute(batch);
      const wanted = sequences.map((_, k) => k).filter((k) => k % 2 === 0);
      expect(out.logits.length).toBe(wanted.length * vocab);
      wanted.forEach((k, r) => expectSolo(k, (sequences[k] as number[]).length - 1, row(out.logits, r, vocab)));
    });

    it('a fork with copy-on-write (blockCopies) continues like a solo sequence', async () => {
      const base = sequences[0] as number[];
      const prefix = base.slice(0, 2 * BLOCK_SIZE + 2); // two full blocks and a partial one
      const tail = [5, 6]; // fills the third block exactly
      // The parent fills blocks 1, 2, 3; the child shares 1 and 2 and gets a copy of 3 in block 4.
      await backend.execute(buildBatch([{ tokens: prefix, pastLen: 0, blocks: [1, 2, 3], logits: 'none' }]));
      const out = await backend.execute(
        buildBatch([{ tokens: tail, pastLen: prefix.length, blocks: [1, 2, 4], logits: 'all' }], [3, 4]),
      );
      const expected = await backend.execute(
        buildBatch([{ tokens: [...prefix, ...tail], pastLen: 0, blocks: [5, 6, 7, 8], logits: 'all' }]),
      );
      for (let i = 0; i < tail.length; i++)
        expect(maxAbsDiff(row(out.logits, i, vocab), row(expected.logits, prefix.length + i, vocab))).toBeLessThanOrEqual(TOLERANCE);
    });

    it('one thread gives the same logits as two', async () => {
      const single = await CpuBackend.load(dir, { threads: 1 });
      try {
        expect(single.threads).toBe(1);
        await single.allocateCache({ numBlocks: totalBlocks + 1, blockSize: BLOCK_SIZE, precision });
        const tokens = sequences[sequences.length - 1] as number[];
        const out = await single.execute(buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, blocksPerSeq[sequences.length - 1] as number), logits: 'all' }]));
        for (let p = 0; p < tokens.length; p++) expectSolo(sequences.length - 1, p, row(out.logits, p, vocab));
      } finally {
        await single.dispose();
      }
    });
  });

  // Largest |logit - f32 logit| over the row's largest |f32 logit|, at any
  // position. f16 rounds each cached value; u8 quantises each cached row (one
  // token, one kv head) to 8 bits between its min and max, so its bound is
  // looser (seen: f16 <= 1.1e-3, u8 <= 3.3e-2 on the three reference models).
  const QUANTISED_TOLERANCE = { f16: 5e-3, u8: 8e-2 } as const;

  describe(`${name}: quantised KV caches against f32`, () => {
    let solo: Float32Array[];
    let vocab: number;
    const shuffledTables = (seed: number): number[][] => {
      const pool = shuffledBlocks(1, totalBlocks + 1, seed);
      return blocksPerSeq.map((n) => pool.splice(0, n));
    };
    beforeAll(async () => {
      const backend = await CpuBackend.load(dir, { threads: 2 });
      vocab = backend.shape.vocabSize;
      await backend.allocateCache({ numBlocks: totalBlocks + 1, blockSize: BLOCK_SIZE, precision: 'f32' });
      solo = [];
      for (const [k, tokens] of sequences.entries())
        solo.push((await backend.execute(buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, blocksPerSeq[k] as number), logits: 'all' }]))).logits);
      await backend.dispose();
    });

    it.each(['f16', 'u8'] as const)('%s KV cache: logits close to f32 at every position, and nearly always the same argmax (greedy ids: reference.test.ts)', async (precision) => {
      const quantised = await CpuBackend.load(dir, { threads: 2 });
      try {
        await quantised.allocateCache({ numBlocks: totalBlocks + 1, blockSize: BLOCK_SIZE, precision });
        const tables = shuffledTables(5);
        const out = await quantised.execute(
          buildBatch(sequences.map((tokens, k) => ({ tokens, pastLen: 0, blocks: tables[k] as number[], logits: 'all' }))),
        );
        let r = 0;
        let sameArgmax = 0;
        let worst = 0;
        for (const [k, tokens] of sequences.entries())
          for (let p = 0; p < tokens.length; p++) {
            const got = row(out.logits, r++, vocab);
            const want = row(solo[k] as Float32Array, p, vocab);
            worst = Math.max(worst, maxAbsDiff(got, want) / maxAbs(want));
            if (argmax(got) === argmax(want)) sameArgmax++;
          }
        expect(worst).toBeLessThan(QUANTISED_TOLERANCE[precision]);
        // Nearly every position predicts the token f32 predicts.
        expect(sameArgmax / r).toBeGreaterThan(precision === 'f16' ? 0.99 : 0.95);
      } finally {
        await quantised.dispose();
      }
    });
  });
}
