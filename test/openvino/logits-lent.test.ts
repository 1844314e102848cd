/**
 * The OpenVINO step's logits are lent to JavaScript (native/common/logits_transfer.h, read
 * once from the output tensor) and its greedy rows are picked on the worker
 * (native/openvino/src/greedy_pick.h): the picks are what the engine's own argmax takes
 * from the same logits, -1 on rows not asked for, and released steps reuse one buffer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StepBatch } from '../../src/backends/backend.js';
import { OpenVinoBackend } from '../../src/backends/openvino/index.js';
import { loadOpenVinoBinding } from '../../src/backends/openvino/native-binding.js';
import { argmax } from '../../src/sampling/sampler.js';
import { describeOpenVino, EXACT, TINY_IR } from './helpers.js';

/** Four prompts of `length` tokens in blocks 1..4, the logits of every token. */
function prefill(length: number, blockSize: number, argmaxRows?: (row: number) => boolean): StepBatch {
  const seqs = 4;
  const total = seqs * length;
  const perSeq = Math.ceil(length / blockSize);
  return {
    inputIds: Int32Array.from({ length: total }, (_, i) => 3 + ((i * 37) % 200)),
    positions: Int32Array.from({ length: total }, (_, i) => i % length),
    pastLens: new Int32Array(seqs),
    subsequenceBegins: Int32Array.from({ length: seqs + 1 }, (_, i) => i * length),
    blockIndices: Int32Array.from({ length: seqs * perSeq }, (_, i) => 1 + i),
    blockIndicesBegins: Int32Array.from({ length: seqs + 1 }, (_, i) => i * perSeq),
    maxContextLen: length,
    logitsIndices: Int32Array.from({ length: total }, (_, i) => i),
    ...(argmaxRows !== undefined && { argmaxRows: Uint8Array.from({ length: total }, (_, r) => (argmaxRows(r) ? 1 : 0)) }),
  };
}

describeOpenVino('OpenVINO logits lent and greedy rows picked natively', () => {
  let backend: OpenVinoBackend;
  let blockSize: number;
  beforeAll(async () => {
    backend = await OpenVinoBackend.load(TINY_IR('f32'), { ...EXACT, threads: 2 });
    blockSize = backend.shape.kvBlockSize!;
    await backend.allocateCache({ numBlocks: 16, blockSize, precision: 'f32' });
  });
  afterAll(() => backend.dispose());

  it('the pick of each marked row is the engine argmax of its logits; unmarked rows get -1; no argmax without argmaxRows', async () => {
    const vocab = backend.shape.vocabSize;
    const marked = (row: number) => row % 3 !== 1;
    const result = await backend.execute(prefill(5, blockSize, marked));
    const rows = result.logits.length / vocab;
    expect(rows).toBe(20);
    expect(result.argmax).toBeDefined();
    const expected = Array.from({ length: rows }, (_, r) => (marked(r) ? argmax(result.logits, r * vocab, (r + 1) * vocab) : -1));
    expect(Array.from(result.argmax!)).toEqual(expected);
    // The picks are not all one token (so equality above means something).
    expect(new Set(expected.filter((t) => t >= 0)).size).toBeGreaterThan(1);
    backend.release(result);
    const plain = await backend.execute(prefill(5, blockSize));
    expect(plain.argmax).toBeUndefined();
    backend.release(plain);
  });

  it('released logits are detached and the next step writes into the same buffer; held ones are never reused', async () => {
    const before = backend.logitsBuffers!.allocated;
    for (const length of [6, 2, 6, 4]) {
      const result = await backend.execute(prefill(length, blockSize));
      const copy = Float32Array.from(result.logits);
      const again = await backend.execute(prefill(length, blockSize));
      // Held while the second step ran: untouched by it (a second buffer was taken).
      expect(Array.from(result.logits)).toEqual(Array.from(copy));
      backend.release(result);
      backend.release(again);
      expect(result.logits.length).toBe(0);
    }
    // Two held at once at most: the pool never needed more than two buffers beyond what earlier tests made.
    expect(backend.logitsBuffers!.allocated - before).toBeLessThanOrEqual(2);
    expect(backend.logitsBuffers!.lent).toBe(0);
  });

  it('an argmaxRows of the wrong length is a step error, not a crash', async () => {
    const batch = { ...prefill(3, blockSize), argmaxRows: new Uint8Array(2).fill(1) };
    await expect(backend.execute(batch)).rejects.toThrow(/argmaxRows has 2 entries for 12 logits rows/);
    const after = await backend.execute(prefill(3, blockSize));
    expect(after.logits.length).toBe(12 * backend.shape.vocabSize);
    backend.release(after);
  });
});

describeOpenVino('the worker\'s greedy pick (greedy_pick.h)', () => {
  it('equals the engine argmax on rows of NaNs, infinities, signed zeros and ties, of every length around its 16-value blocks', () => {
    const { greedyPick } = loadOpenVinoBinding().testing;
    const palette = [Number.NaN, -Infinity, Infinity, 0, -0, 1, 2, 2, -3, 7];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let t = 0; t < 3000; t++) {
      const n = 1 + (next() % 70);
      const row = Float32Array.from({ length: n }, () => palette[next() % palette.length]!);
      expect(greedyPick(row), `row ${Array.from(row).join(',')}`).toBe(argmax(row, 0, n));
    }
    // The best value in the middle of a block after a NaN that opens it.
    expect(greedyPick(Float32Array.from([0, Number.NaN, 1, 5, 2, ...new Array(20).fill(0)]))).toBe(3);
    expect(() => greedyPick(new Float32Array(0))).toThrow(RangeError);
  });
});
