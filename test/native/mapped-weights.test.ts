// GGUF (and aligned safetensors) weights kept as stored are used in place
// from a read-only mapping of the file (native/src/cpu/model/mapped_file.h):
// the same logits as reading them, nothing copied, converted weights never mapped.
import { renameSync, rmSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend, type CpuBackendOptions } from '../../src/backends/cpu/index.js';
import { loadNativeBinding, type WeightBytes } from '../../src/backends/cpu/native-binding.js';
import { InvalidOptionError, Pipeline } from '../../src/index.js';
import { readGgufFile } from '../../src/model-files/gguf/reader.js';
import { convertHfToGguf } from '../support/hf-to-gguf.js';
import { buildBatch, contiguousBlocks, sharedModel } from './helpers.js';
import { writeRandomModel } from './random-model.js';

const base = {
  hidden_size: 64, intermediate_size: 96, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
  vocab_size: 96, max_position_embeddings: 64, rms_norm_eps: 1e-6,
};
const qwen3 = writeRandomModel({ ...base, architectures: ['Qwen3ForCausalLM'], head_dim: 32, rope_theta: 1e6, tie_word_embeddings: false }, 5);
const llama = writeRandomModel({ ...base, architectures: ['LlamaForCausalLM'], tie_word_embeddings: true }, 6);
afterAll(() => [qwen3.dir, llama.dir].forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const tokens = [3, 17, 90, 4, 55, 21, 8, 63];

async function run(load: () => Promise<CpuBackend>): Promise<{ logits: number[]; bytes: WeightBytes }> {
  const backend = await load();
  try {
    await backend.allocateCache({ numBlocks: 4, blockSize: 16, precision: 'f32' });
    const { logits } = await backend.execute(buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, 1), logits: 'all' }]));
    return { logits: Array.from(logits), bytes: backend.weightBytes! };
  } finally {
    await backend.dispose();
  }
}

/** Bytes of the file's matrices (2-D tensors), which are the ones mapped. */
function matrixBytes(file: string, skip: (name: string) => boolean = () => false): number {
  let total = 0;
  for (const t of readGgufFile(file).tensors.values()) if (t.dims.length === 2 && !skip(t.name)) total += t.byteLength;
  return total;
}

describe('mapped weights', () => {
  it('a Q8_0 GGUF: row-grouped for its kernels, so copied at load and never mapped, the same logits as reading', async () => {
    const file = join(qwen3.dir, 'model-Q8_0.gguf');
    await convertHfToGguf(qwen3.dir, file, 'Q8_0');
    const mapped = await run(() => CpuBackend.loadGguf(file, { threads: 2, mmap: true }));
    const read = await run(() => CpuBackend.loadGguf(file, { threads: 2, mmap: false }));
    expect(mapped.logits).toEqual(read.logits);
    expect(mapped.bytes.mapped).toBe(0);
    expect(mapped.bytes.copied).toBe(read.bytes.copied);
  });

  for (const type of ['F32', 'F16'] as const) {
    it(`a ${type} GGUF: matrices used from the mapping, the same logits as reading every weight`, async () => {
      const file = join(qwen3.dir, `model-${type}.gguf`);
      await convertHfToGguf(qwen3.dir, file, type);
      const mapped = await run(() => CpuBackend.loadGguf(file, { threads: 2, mmap: true }));
      const read = await run(() => CpuBackend.loadGguf(file, { threads: 2, mmap: false }));
      expect(mapped.logits).toEqual(read.logits);
      expect(mapped.bytes.mapped).toBe(matrixBytes(file));
      expect(read.bytes.mapped).toBe(0);
      // Only the norms (widened to float32) are copied when mapping.
      expect(mapped.bytes.copied).toBeLessThan(0.05 * mapped.bytes.mapped);
    });
  }

  // native/src/cpu/kernels/float/sextets.h: 16-bit matrices read into memory are rewritten in 6-row groups
  // (by default on Intel CPUs; WEFT_SEXTETS=1 or 0 decides); the embedding lookup (the llama
  // model's tied head) reads them too. Either way the logits are those of the mapped row-major weights.
  for (const setting of ['1', '0'] as const) {
    it(`WEFT_SEXTETS=${setting}: F16 matrices read into memory give the logits of the mapped row-major weights`, async () => {
      for (const model of [qwen3, llama]) {
        const file = join(model.dir, `model-F16-sextets-${setting}.gguf`);
        await convertHfToGguf(model.dir, file, 'F16');
        const mapped = await run(() => CpuBackend.loadGguf(file, { threads: 2, mmap: true }));
        process.env.WEFT_SEXTETS = setting;
        try {
          const read = await run(() => CpuBackend.loadGguf(file, { threads: 2, mmap: false }));
          expect(read.logits).toEqual(mapped.logits);
          expect(read.bytes.mapped).toBe(0);
          // Every matrix (K = 32, 64 or 96 here) is kept in sextets, or none.
          expect(read.bytes.sextets).toBe(setting === '1' ? matrixBytes(file) : 0);
        } finally {
          delete process.env.WEFT_SEXTETS;
        }
      }
    });
  }

  it('converted weights are copied, never mapped: quantizing at load, and llama q/k rows put back in order', async () => {
    const f16 = join(qwen3.dir, 'model-F16.gguf');
    await convertHfToGguf(qwen3.dir, f16, 'F16');
    const quantized = await run(() => CpuBackend.loadGguf(f16, { threads: 2, quantize: 'q8_0', mmap: true }));
    expect(quantized.bytes.mapped).toBe(0);
    const file = join(llama.dir, 'model.gguf');
    await convertHfToGguf(llama.dir, file, 'F16');
    const options: CpuBackendOptions = { threads: 2, mmap: true };
    const mapped = await run(() => CpuBackend.loadGguf(file, options));
    const read = await run(() => CpuBackend.loadGguf(file, { ...options, mmap: false }));
    expect(mapped.logits).toEqual(read.logits);
    expect(mapped.bytes.mapped).toBe(matrixBytes(file, (name) => /attn_[qk]\.weight$/.test(name)));
  });

  it('a model keeps its weights when the file is replaced by rename while it runs', async () => {
    const file = join(qwen3.dir, 'model-F16-replaced.gguf');
    await convertHfToGguf(qwen3.dir, file, 'F16');
    const backend = await CpuBackend.loadGguf(file, { threads: 2, mmap: true });
    try {
      await backend.allocateCache({ numBlocks: 4, blockSize: 16, precision: 'f32' });
      const batch = buildBatch([{ tokens, pastLen: 0, blocks: contiguousBlocks(1, 1), logits: 'all' }]);
      const before = Array.from((await backend.execute(batch)).logits);
      // Another model's file moved over this one: the mapping still holds the old file.
      const other = join(llama.dir, 'other.gguf');
      await convertHfToGguf(llama.dir, other, 'F16');
      copyFileSync(other, `${file}.new`);
      renameSync(`${file}.new`, file);
      expect(Array.from((await backend.execute(batch)).logits)).toEqual(before);
    } finally {
      await backend.dispose();
    }
  });

  it('safetensors: aligned float32 matrices are mapped too, with the same logits', async () => {
    const mapped = await run(() => CpuBackend.load(qwen3.dir, { threads: 2, mmap: true }));
    const read = await run(() => CpuBackend.load(qwen3.dir, { threads: 2, mmap: false }));
    expect(mapped.logits).toEqual(read.logits);
    expect(read.bytes.mapped).toBe(0);
    expect(mapped.bytes.mapped + mapped.bytes.copied).toBe(read.bytes.copied);
  });

  it('by default reads the weights onto huge pages where the OS has them, else maps the file', async () => {
    const file = join(qwen3.dir, 'model-F16-default.gguf');
    await convertHfToGguf(qwen3.dir, file, 'F16');
    const byDefault = await run(() => CpuBackend.loadGguf(file, { threads: 2 }));
    const read = await run(() => CpuBackend.loadGguf(file, { threads: 2, mmap: false }));
    const hugePages = loadNativeBinding().transparentHugePages();
    expect(byDefault.logits).toEqual(read.logits);
    expect(byDefault.bytes.mapped).toBe(hugePages ? 0 : matrixBytes(file));
    // The copied matrices lie in the arena, advised as huge pages where the OS takes the advice.
    expect(read.bytes.hugePages).toBe(hugePages);
  });

  const stories = sharedModel('stories260K');
  it.skipIf(stories === undefined)('Pipeline.create takes mmap: false (and checks it), with the same greedy output', async () => {
    const file = join(stories!, 'model.gguf');
    await expect(Pipeline.create({ model: file, mmap: 'no' as never })).rejects.toBeInstanceOf(InvalidOptionError);
    const outputs = [];
    for (const mmap of [true, false]) {
      const pipe = await Pipeline.create({ model: file, threads: 2, mmap });
      try {
        outputs.push((await pipe.generate('Once upon a time', { maxTokens: 24, temperature: 0, ignoreEos: true })).tokenIds);
      } finally {
        await pipe.close();
      }
    }
    expect(outputs[0]).toHaveLength(24);
    expect(outputs[1]).toEqual(outputs[0]);
  });
});
