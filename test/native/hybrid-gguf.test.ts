// GGUF qwen35 files, laid out as llama.cpp's converter writes them
// (test/support/qwen35-to-gguf.ts; tools/hybrid/NOTES.md section 8), on the CPU
// backend: the reader undoes the converter's transforms (1 + w norms,
// A = -exp(A_log), value heads in tiled order), so the F32 file runs
// transformers' references as the safetensors do, and a Q8_0 file runs like
// the safetensors quantized to Q8_0 at load.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { ModelLoadError } from '../../src/errors.js';
import { readGgufFile } from '../../src/model-files/gguf/reader.js';
import { LINEAR_STATE_POOL } from '../../src/backends/cpu/cpu-backend.js';
import { greedySolo, contiguousBlocks, maxAbsDiff, readReference, REPO_ROOT } from './helpers.js';
import { meta } from '../support/gguf-writer.js';
import { convertQwen35ToGguf, writeRoundedTwin } from '../support/qwen35-to-gguf.js';
import type { MatrixType } from '../support/hf-to-gguf.js';

interface HybridCase {
  prompt_ids: number[];
  greedy_ids: number[];
  first_logits: number[];
}

const BLOCK_SIZE = 16;
const work = mkdtempSync(join(tmpdir(), 'weft-qwen35-gguf-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function open(load: () => Promise<CpuBackend>, blocksPerSeq: number): Promise<CpuBackend> {
  const backend = await load();
  await backend.allocateCache({ numBlocks: blocksPerSeq + 1, blockSize: BLOCK_SIZE, precision: 'f32', extraPoolBlocks: { [LINEAR_STATE_POOL]: 2 } });
  return backend;
}

async function runAll(backend: CpuBackend, cases: HybridCase[], blocksPerSeq: number) {
  const out = [];
  for (const c of cases) out.push(await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, contiguousBlocks(1, blocksPerSeq), Infinity, 1));
  return out;
}

describe.each([
  { name: 'qwen35-tiny', dir: join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny') },
  { name: 'qwen35-tiny-vl', dir: join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny-vl') },
])('$name as a qwen35 GGUF', ({ name, dir }) => {
  const reference = readReference(dir) as unknown as { cases: HybridCase[] };
  const cases = reference.cases;
  const longest = Math.max(...cases.map((c) => c.prompt_ids.length + c.greedy_ids.length));
  const blocksPerSeq = Math.ceil(longest / BLOCK_SIZE);
  const file = (type: MatrixType) => join(work, `${name}.${type}.gguf`);
  const twin = (type: MatrixType) => join(work, `${name}.${type}-twin`);
  let safetensors: Awaited<ReturnType<typeof runAll>>;

  beforeAll(async () => {
    for (const type of ['F32', 'F16', 'Q8_0'] as const) await convertQwen35ToGguf(dir, file(type), type);
    for (const type of ['F16', 'Q8_0'] as const) await writeRoundedTwin(dir, twin(type), type);
    const st = await open(() => CpuBackend.load(dir, { threads: 2 }), blocksPerSeq);
    safetensors = await runAll(st, cases, blocksPerSeq);
    await st.dispose();
  });

  it('F32: greedy ids equal transformers\' and the safetensors run; first logits within 1e-4 of the safetensors run', async () => {
    const backend = await open(() => CpuBackend.loadGguf(file('F32'), { threads: 2 }), blocksPerSeq);
    expect(backend.shape.numLayers).toBe(2); // 6 of the 8 layers are Gated DeltaNet
    const runs = await runAll(backend, cases, blocksPerSeq);
    await backend.dispose();
    runs.forEach((run, i) => {
      expect(run.ids).toEqual(cases[i]!.greedy_ids);
      expect(run.ids).toEqual(safetensors[i]!.ids);
      expect(maxAbsDiff(run.firstLogits, safetensors[i]!.firstLogits)).toBeLessThan(1e-4);
      expect(maxAbsDiff(run.firstLogits, cases[i]!.first_logits)).toBeLessThan(Math.max(1e-4, 1.5e-5 * Math.max(...cases[i]!.first_logits.map(Math.abs))));
    });
  });

  // A random tiny model's greedy path has near-ties, so F16 or Q8_0 rounding may change its ids against
  // transformers' float32 ones: the check is against the same rounded weights read from safetensors.
  it('F16 matrices: logits and ids exactly those of the safetensors with the same F16 matrices', async () => {
    const backend = await open(() => CpuBackend.loadGguf(file('F16'), { threads: 2 }), blocksPerSeq);
    const runs = await runAll(backend, cases, blocksPerSeq);
    await backend.dispose();
    const st = await open(() => CpuBackend.load(twin('F16'), { threads: 2 }), blocksPerSeq);
    const expected = await runAll(st, cases, blocksPerSeq);
    await st.dispose();
    runs.forEach((run, i) => {
      expect(maxAbsDiff(run.firstLogits, safetensors[i]!.firstLogits)).toBeGreaterThan(0); // it really is F16
      expect(maxAbsDiff(run.firstLogits, expected[i]!.firstLogits)).toBe(0);
      expect(run.ids).toEqual(expected[i]!.ids);
    });
  });

  it('Q8_0 matrices (quantize: q8_0 for the ones the file keeps float): the safetensors of the same values quantized at load', async () => {
    const backend = await open(() => CpuBackend.loadGguf(file('Q8_0'), { threads: 2, quantize: 'q8_0' }), blocksPerSeq);
    const runs = await runAll(backend, cases, blocksPerSeq);
    await backend.dispose();
    const st = await open(() => CpuBackend.load(twin('Q8_0'), { threads: 2, quantize: 'q8_0' }), blocksPerSeq);
    const expected = await runAll(st, cases, blocksPerSeq);
    await st.dispose();
    runs.forEach((run, i) => {
      expect(maxAbsDiff(run.firstLogits, expected[i]!.firstLogits)).toBe(0);
      expect(run.ids).toEqual(expected[i]!.ids);
    });
  });
});

describe('broken qwen35 tensors', () => {
  const dir = join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny');
  const good = join(work, 'broken-base.gguf');
  beforeAll(async () => convertQwen35ToGguf(dir, good, 'F32'));

  it('a missing Gated DeltaNet tensor is a ModelLoadError naming it', async () => {
    const bytes = readFileSync(good);
    const at = bytes.indexOf('blk.1.ssm_a');
    expect(at).toBeGreaterThan(0);
    bytes.write('blk.1.ssm_q', at, 'latin1'); // same length: the header stays valid, the name is gone
    const file = join(work, 'missing-ssm-a.gguf');
    writeFileSync(file, bytes);
    const error = await CpuBackend.loadGguf(file, { threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toMatch(/tensor blk\.1\.ssm_a is missing/);
  });

  it('an ssm_a that is not -exp(A_log) (a value >= 0) is a ModelLoadError naming the tensor', async () => {
    const bytes = readFileSync(good);
    const t = readGgufFile(good).tensors.get('blk.0.ssm_a')!;
    bytes.writeFloatLE(0.5, t.offset + 4);
    const file = join(work, 'positive-a.gguf');
    writeFileSync(file, bytes);
    const error = await CpuBackend.loadGguf(file, { threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toMatch(/tensor blk\.0\.ssm_a\): element 1 is 0\.5: A is stored as -exp\(A_log\)/);
  });

  it('an ssm_conv1d of the wrong taps is a ModelLoadError naming the tensor', async () => {
    const file = join(work, 'conv-taps.gguf');
    await convertQwen35ToGguf(dir, file, 'F32', [['qwen35.ssm.conv_kernel', meta.u32(3)]]);
    const error = await CpuBackend.loadGguf(file, { threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toMatch(/tensor blk\.0\.ssm_conv1d\.weight\): GGUF dims \[4,96\], expected \[3, 96\]/);
  });
});
