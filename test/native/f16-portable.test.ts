// F16 weights through the portable widening kernel (what CPUs without F16C
// run): exactly the logits of the same weights stored as float32.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { floatToHalfTruncated, halfToFloat, readAllTensors, type RawTensor, writeSafetensors } from '../models/safetensors-writer.js';
import { buildBatch, QWEN3_TINY, readReference } from './helpers.js';

// Read once by the addon, at the first F16 matmul of this (forked) test process.
process.env.WEFT_NO_F16C = '1';

it('F16 weights give exactly the float32 logits on the portable kernel', async () => {
  const tensors = await readAllTensors(join(QWEN3_TINY, 'model.safetensors'));
  const halves = tensors.map((t) => Uint16Array.from(new Float32Array(t.data.slice().buffer), floatToHalfTruncated));
  const write = (make: (t: RawTensor, h: Uint16Array) => RawTensor): string => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-f16-'));
    cpSync(join(QWEN3_TINY, 'config.json'), join(dir, 'config.json'));
    writeSafetensors(join(dir, 'model.safetensors'), tensors.map((t, i) => make(t, halves[i] as Uint16Array)));
    return dir;
  };
  const f16 = write((t, h) => ({ ...t, dtype: 'F16', data: new Uint8Array(h.buffer) }));
  const f32 = write((t, h) => ({ ...t, dtype: 'F32', data: new Uint8Array(Float32Array.from(h, halfToFloat).buffer) }));
  const prompt = (readReference(QWEN3_TINY).cases[4] as { prompt_ids: number[] }).prompt_ids; // 40 tokens: prefill tiles
  const logits = async (dir: string) => {
    const backend = await CpuBackend.load(dir, { threads: 2 });
    try {
      await backend.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
      const prefill = await backend.execute(buildBatch([{ tokens: prompt, pastLen: 0, blocks: [1, 2, 3, 4], logits: 'all' }]));
      const decode = await backend.execute(buildBatch([{ tokens: [7], pastLen: prompt.length, blocks: [1, 2, 3, 4] }]));
      return [prefill.logits, decode.logits];
    } finally {
      await backend.dispose();
    }
  };
  expect(await logits(f16)).toEqual(await logits(f32));
});
