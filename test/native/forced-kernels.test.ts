// WEFT_CPU_KERNELS forces a kernel set (read once per process, so this forked
// test file sets it before the addon's first use): avx2 on a CPU that has
// more, and the float and Q8_0 paths still match their references.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { contiguousBlocks, greedySolo, maxAbsDiff, QWEN3_TINY, readReference } from './helpers.js';

process.env.WEFT_CPU_KERNELS = 'avx2';
const flags = process.platform === 'linux' ? (/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '') : '';
const hasAvx2 = process.arch === 'x64' && ['avx2', 'fma', 'f16c'].every((f) => flags.split(/\s+/).includes(f));

it.skipIf(!hasAvx2)('WEFT_CPU_KERNELS=avx2 runs the AVX2 set; F32 and Q8_0 weights keep their reference results', async () => {
  const reference = readReference(QWEN3_TINY);
  for (const quantize of [undefined, 'q8_0'] as const) {
    const backend = await CpuBackend.load(QWEN3_TINY, { threads: 2, ...(quantize && { quantize }) });
    try {
      expect(backend.kernels).toBe('avx2');
      await backend.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
      const c = reference.cases[2]!;
      const { ids, firstLogits } = await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, contiguousBlocks(1, 5));
      if (quantize === undefined) {
        expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(1e-4);
        expect(ids).toEqual(c.greedy_ids);
      } else {
        expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(0.5); // measured ~0.13 on this random-weight model
      }
    } finally {
      await backend.dispose();
    }
  }
});
