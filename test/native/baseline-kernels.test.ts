// The baseline kernels (what CPUs without AVX2/FMA/F16C run; forced here with
// WEFT_CPU_BASELINE=1): reference logits and greedy ids, and F16/BF16 weights
// giving exactly the logits of their float32 copies.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { floatToHalfTruncated, halfToFloat, readAllTensors, type RawTensor, writeSafetensors } from '../model-files/safetensors-writer.js';
import { buildBatch, contiguousBlocks, greedySolo, maxAbsDiff, QWEN3_TINY, readReference } from './helpers.js';

// Read once by the addon, at the first matmul of this (forked) test process.
process.env.WEFT_CPU_BASELINE = '1';

const reference = readReference(QWEN3_TINY);

it('matches the reference logits and greedy ids', async () => {
  const backend = await CpuBackend.load(QWEN3_TINY, { threads: 2 });
  try {
    expect(backend.kernels).toBe('baseline'); // the environment variable took effect
    await backend.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
    for (const c of reference.cases) {
      const { ids, firstLogits } = await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, contiguousBlocks(1, 5));
      expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(1e-4);
      expect(ids).toEqual(c.greedy_ids);
    }
  } finally {
    await backend.dispose();
  }
});

it.each(['F16', 'BF16'] as const)('%s weights give exactly the logits of their float32 copy', async (dtype) => {
  const tensors = await readAllTensors(join(QWEN3_TINY, 'model.safetensors'));
  const encode = dtype === 'F16' ? floatToHalfTruncated : (f: number) => (new Uint32Array(Float32Array.of(f).buffer)[0] as number) >>> 16;
  const decode = dtype === 'F16' ? halfToFloat : (h: number) => new Float32Array(Uint32Array.of(h << 16).buffer)[0] as number;
  const bits = tensors.map((t) => Uint16Array.from(new Float32Array(t.data.slice().buffer), encode));
  const write = (make: (t: RawTensor, h: Uint16Array) => RawTensor): string => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-baseline-'));
    cpSync(join(QWEN3_TINY, 'config.json'), join(dir, 'config.json'));
    writeSafetensors(join(dir, 'model.safetensors'), tensors.map((t, i) => make(t, bits[i] as Uint16Array)));
    return dir;
  };
  const half = write((t, h) => ({ ...t, dtype, data: new Uint8Array(h.buffer) }));
  const full = write((t, h) => ({ ...t, dtype: 'F32', data: new Uint8Array(Float32Array.from(h, decode).buffer) }));
  const prompt = (reference.cases[4] as { prompt_ids: number[] }).prompt_ids; // 40 tokens: the prefill tiles
  const logits = async (dir: string) => {
    const backend = await CpuBackend.load(dir, { threads: 2 });
    try {
      expect(backend.kernels).toBe('baseline');
      await backend.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
      const prefill = await backend.execute(buildBatch([{ tokens: prompt, pastLen: 0, blocks: [1, 2, 3, 4], logits: 'all' }]));
      const decodeStep = await backend.execute(buildBatch([{ tokens: [7], pastLen: prompt.length, blocks: [1, 2, 3, 4] }]));
      return [prefill.logits, decodeStep.logits];
    } finally {
      await backend.dispose();
    }
  };
  expect(await logits(half)).toEqual(await logits(full));
});
