// GGUF qwen3next files, laid out as llama.cpp's converter writes them
// (test/support/qwen3next-to-gguf.ts; tools/hybrid/NOTES.md section 8): the
// reader takes in_proj_qkv / in_proj_z as the converter split them, gathers b
// and a from the fused ssm_ba, reads each routed expert in place from the
// stacked ffn_*_exps at its byte offset, and undoes the 1 + w norms and
// A = -exp(A_log). The F32 file runs as the safetensors do; F16 and Q8_0
// files run exactly like safetensors holding the same rounded values.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { LINEAR_STATE_POOL } from '../../src/backends/cpu/cpu-backend.js';
import { ModelLoadError, UnsupportedModelError } from '../../src/errors.js';
import { meta } from '../support/gguf-writer.js';
import type { MatrixType } from '../support/hf-to-gguf.js';
import { writeRoundedTwin } from '../support/qwen35-to-gguf.js';
import { convertQwen3NextToGguf } from '../support/qwen3next-to-gguf.js';
import { contiguousBlocks, greedySolo, maxAbsDiff, readReference, REPO_ROOT } from './helpers.js';

interface HybridCase { prompt_ids: number[]; greedy_ids: number[]; first_logits: number[] }

const BLOCK_SIZE = 16;
const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3next-tiny');
const work = mkdtempSync(join(tmpdir(), 'weft-qwen3next-gguf-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const cases = (readReference(DIR) as unknown as { cases: HybridCase[] }).cases;
const longest = Math.max(...cases.map((c) => c.prompt_ids.length + c.greedy_ids.length));
const blocksPerSeq = Math.ceil(longest / BLOCK_SIZE);
const file = (type: MatrixType) => join(work, `qwen3next-tiny.${type}.gguf`);

async function runAll(load: () => Promise<CpuBackend>) {
  const backend = await load();
  await backend.allocateCache({ numBlocks: blocksPerSeq + 1, blockSize: BLOCK_SIZE, precision: 'f32', extraPoolBlocks: { [LINEAR_STATE_POOL]: 2 } });
  const out = [];
  for (const c of cases) out.push(await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, contiguousBlocks(1, blocksPerSeq), Infinity, 1));
  await backend.dispose();
  return out;
}

describe('qwen3next-tiny as a qwen3next GGUF', () => {
  let safetensors: Awaited<ReturnType<typeof runAll>>;
  beforeAll(async () => {
    for (const type of ['F32', 'F16', 'Q8_0'] as const) await convertQwen3NextToGguf(DIR, file(type), type);
    safetensors = await runAll(() => CpuBackend.load(DIR, { threads: 2 }));
  });

  it('F32: greedy ids equal transformers\' and the safetensors run; first logits within 1e-5 of the safetensors run', async () => {
    const runs = await runAll(() => CpuBackend.loadGguf(file('F32'), { threads: 2 }));
    runs.forEach((run, i) => {
      expect(run.ids).toEqual(cases[i]!.greedy_ids);
      expect(run.ids).toEqual(safetensors[i]!.ids);
      expect(maxAbsDiff(run.firstLogits, safetensors[i]!.firstLogits)).toBeLessThan(1e-5);
    });
  });

  it.each(['F16', 'Q8_0'] as const)('%s matrices: logits and ids exactly those of the safetensors with the same rounded matrices', async (type) => {
    const twin = join(work, `twin-${type}`);
    await writeRoundedTwin(DIR, twin, type);
    const quantize = type === 'Q8_0' ? ({ quantize: 'q8_0' } as const) : {};
    const runs = await runAll(() => CpuBackend.loadGguf(file(type), { threads: 2, ...quantize }));
    const expected = await runAll(() => CpuBackend.load(twin, { threads: 2, ...quantize }));
    runs.forEach((run, i) => {
      expect(maxAbsDiff(run.firstLogits, safetensors[i]!.firstLogits)).toBeGreaterThan(0); // it really is rounded
      expect(maxAbsDiff(run.firstLogits, expected[i]!.firstLogits)).toBe(0);
      expect(run.ids).toEqual(expected[i]!.ids);
    });
  });

  it('a router other than softmax is refused by name; an expert count the tensors disagree with is a ModelLoadError naming the tensor', async () => {
    const sigmoid = join(work, 'sigmoid.gguf');
    await convertQwen3NextToGguf(DIR, sigmoid, 'F32', [['qwen3next.expert_gating_func', meta.u32(2)]]);
    await expect(CpuBackend.loadGguf(sigmoid, { threads: 1 })).rejects.toThrow(UnsupportedModelError);
    await expect(CpuBackend.loadGguf(sigmoid, { threads: 1 })).rejects.toThrow(/expert_gating_func 2 is not supported/);
    const few = join(work, 'few-experts.gguf');
    await convertQwen3NextToGguf(DIR, few, 'F32', [['qwen3next.expert_count', meta.u32(3)]]);
    const error = await CpuBackend.loadGguf(few, { threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toMatch(/tensor blk\.0\.ffn_gate_inp\.weight\): GGUF dims \[32,4\], expected \[32,3\]/);
  });
});
