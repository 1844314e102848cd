// Hybrid models (Qwen3.5: Gated DeltaNet + gated full attention) on the CPU
// backend against transformers' references (test/fixtures/qwen35-tiny*, made by
// tools/hybrid/make_fixtures.py): both folder layouts, every way of splitting a
// prompt into steps, eight sequences at once, state slots handed from one
// sequence to the next, and the step checks of the second pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { LINEAR_STATE_POOL } from '../../src/backends/cpu/cpu-backend.js';
import { BackendError } from '../../src/errors.js';
import { argmax, buildBatch, contiguousBlocks, greedySolo, maxAbsDiff, readReference, REPO_ROOT, row, shuffledBlocks } from './helpers.js';
import { join } from 'node:path';

interface HybridCase {
  prompt_ids: number[];
  greedy_ids: number[];
  first_logits: number[];
  recurrent_last_logits?: number[];
}

const LAYOUTS = [
  // The text-only layout (model.layers.N.*, untied head) and the published one
  // (text_config nested, model.language_model.*, tied head, vision tower and mtp.* skipped).
  { name: 'qwen35-tiny', dir: join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny') },
  { name: 'qwen35-tiny-vl', dir: join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny-vl') },
  // Qwen3-Next: the same layers with fused projections, and a mixture of experts in every layer.
  // Its 2-token prompt's reference is 2.3e-4 from tools/hybrid/check_spec.py's float64 forward
  // (every other prompt under 3e-5), and transformers' own chunked and recurrent forms differ by
  // 2.85e-4 at some position of this fixture (reference.json: chunked_vs_recurrent): 3e-4 here.
  { name: 'qwen3next-tiny', dir: join(REPO_ROOT, 'test', 'fixtures', 'qwen3next-tiny'), bound: 3e-4 },
];

/**
 * First-step logits tolerance. transformers' own float32 forms disagree by about
 * 1e-5 of the largest logit (reference.json: chunked vs recurrent differ by 1.2e-4
 * on the -vl fixture, whose logits reach 29; tools/hybrid/check_spec.py in float64
 * differs from the reference by 2.3e-4 there). So: the fixture's bound (1e-4 unless
 * LAYOUTS says why not) where the logits stay under 10, 1.5e-5 of the largest logit otherwise.
 */
function toleranceOf(bound = 1e-4) {
  return (logits: readonly number[]): number => Math.max(bound, 1.5e-5 * Math.max(...logits.map(Math.abs)));
}

const BLOCK_SIZE = 16;

describe.each(LAYOUTS)('$name', ({ dir, bound }) => {
  const tolerance = toleranceOf(bound);
  const reference = readReference(dir) as unknown as { vocab_size: number; cases: HybridCase[] };
  const vocab = reference.vocab_size;
  const cases = reference.cases;
  const longest = Math.max(...cases.map((c) => c.prompt_ids.length + c.greedy_ids.length));
  const blocksPerSeq = Math.ceil(longest / BLOCK_SIZE);
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.load(dir, { threads: 2 });
    await backend.allocateCache({
      numBlocks: 8 * blocksPerSeq + 1, blockSize: BLOCK_SIZE, precision: 'f32', extraPoolBlocks: { [LINEAR_STATE_POOL]: 9 },
    });
  });
  afterAll(async () => backend.dispose());

  it('declares its linear-attention layers as a second pool and keeps KV rows for the attention layers only', () => {
    expect(backend.shape.numLayers).toBe(2); // 8 layers, of which 6 are Gated DeltaNet
    const [pool] = backend.shape.extraPools ?? [];
    // 6 layers x ((4 - 1) taps x 96 channels + 4 value heads x 16 x 8) x 4 bytes
    expect(pool).toEqual({ name: LINEAR_STATE_POOL, blockSize: Infinity, bytesPerBlock: 6 * (3 * 96 + 4 * 16 * 8) * 4 });
  });

  it.each(cases.map((c, i) => [c.prompt_ids.length, i] as const))('a %i-token prompt alone: first logits and 32 greedy ids', async (_, i) => {
    const c = cases[i]!;
    const { ids, firstLogits } = await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, contiguousBlocks(1, blocksPerSeq), Infinity, 1 + i);
    expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(tolerance(c.first_logits));
    expect(ids).toEqual(c.greedy_ids);
    if (c.recurrent_last_logits) expect(maxAbsDiff(firstLogits, c.recurrent_last_logits)).toBeLessThan(tolerance(c.first_logits));
  });

  it.each([1, 3, 64, 100])('prefill in steps of %i tokens gives the same ids (the state carries across steps)', async (chunk) => {
    for (const c of cases.filter((x) => x.prompt_ids.length > chunk)) {
      const { ids, firstLogits } = await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, shuffledBlocks(1, 1 + blocksPerSeq, chunk), chunk, 2);
      expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(tolerance(c.first_logits));
      expect(ids).toEqual(c.greedy_ids);
    }
  });

  it('eight sequences in one batch (prefills of different lengths, then decodes), each with its own state slot', async () => {
    const seqs = [...cases, cases[2]!, cases[0]!].map((c, i) => ({
      c, blocks: contiguousBlocks(1 + i * blocksPerSeq, blocksPerSeq), slot: 8 - i, past: 0, next: -1, ids: [] as number[],
    }));
    // Prefill all eight in one step, then decode all eight together.
    let out = await backend.execute(buildBatch(seqs.map((s) => ({ tokens: s.c.prompt_ids, pastLen: 0, blocks: s.blocks, stateSlot: s.slot }))));
    seqs.forEach((s, r) => {
      expect(maxAbsDiff(row(out.logits, r, vocab), s.c.first_logits)).toBeLessThan(tolerance(s.c.first_logits));
      s.past = s.c.prompt_ids.length;
      s.next = argmax(row(out.logits, r, vocab));
    });
    for (let step = 0; step < 32; step++) {
      for (const s of seqs) s.ids.push(s.next);
      if (step === 31) break;
      out = await backend.execute(buildBatch(seqs.map((s) => ({ tokens: [s.next], pastLen: s.past, blocks: s.blocks, stateSlot: s.slot }))));
      seqs.forEach((s, r) => {
        s.past += 1;
        s.next = argmax(row(out.logits, r, vocab));
      });
    }
    for (const s of seqs) expect(s.ids).toEqual(s.c.greedy_ids);
  });

  it('a slot that held another sequence starts the next one from zero state', async () => {
    const [a, b] = [cases[5]!, cases[2]!];
    await greedySolo(backend, a.prompt_ids, 4, contiguousBlocks(1, blocksPerSeq), Infinity, 3);
    const { ids } = await greedySolo(backend, b.prompt_ids, b.greedy_ids.length, contiguousBlocks(1, blocksPerSeq), Infinity, 3);
    expect(ids).toEqual(b.greedy_ids);
  });

  describe('a step without a valid linear-state table is refused, and the model keeps working', () => {
    const c = cases[2]!;
    const blocks = contiguousBlocks(1, blocksPerSeq);
    const bad: Array<[string, Parameters<typeof buildBatch>[0], RegExp]> = [
      ['no table', [{ tokens: c.prompt_ids, pastLen: 0, blocks }], /one linear-state block per sequence.*got 0 for 1/],
      ['the null block', [{ tokens: c.prompt_ids, pastLen: 0, blocks, stateSlot: 0 }], /linear-state block\[0\] = 0 is not a block in \[1, 9\)/],
      ['a block past the pool', [{ tokens: c.prompt_ids, pastLen: 0, blocks, stateSlot: 9 }], /= 9 is not a block in \[1, 9\)/],
      ['one slot for two sequences', [
        { tokens: c.prompt_ids, pastLen: 0, blocks, stateSlot: 4 },
        { tokens: c.prompt_ids, pastLen: 0, blocks: contiguousBlocks(1 + blocksPerSeq, blocksPerSeq), stateSlot: 4 },
      ], /linear-state block 4 is given to two sequences/],
    ];
    it.each(bad)('%s', async (_, seqs, message) => {
      const error = await backend.execute(buildBatch(seqs)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as Error).message).toMatch(message);
      const { ids } = await greedySolo(backend, c.prompt_ids, 8, blocks, Infinity, 1);
      expect(ids).toEqual(c.greedy_ids.slice(0, 8));
    });

    it('two blocks for one sequence', async () => {
      const batch = buildBatch([{ tokens: c.prompt_ids, pastLen: 0, blocks }]);
      const tables = { [LINEAR_STATE_POOL]: { indices: Int32Array.of(1, 2), begins: Int32Array.of(0, 2) } };
      await expect(backend.execute({ ...batch, extraBlockTables: tables })).rejects.toThrow(/exactly one block/);
    });
  });
});

describe('hybrid cache allocation', () => {
  const dir = LAYOUTS[0]!.dir;
  it('without the linear-state pool is a BackendError naming it', async () => {
    const backend = await CpuBackend.load(dir, { threads: 1 });
    try {
      await expect(backend.allocateCache({ numBlocks: 4, blockSize: 16, precision: 'f16' })).rejects.toThrow(/needs the linear-state pool/);
      await expect(backend.allocateCache({ numBlocks: 4, blockSize: 16, precision: 'f16', extraPoolBlocks: { [LINEAR_STATE_POOL]: 1 } }))
        .rejects.toThrow(/at least 2 linear-state blocks/);
    } finally {
      await backend.dispose();
    }
  });
});
