// WEFT_CPU_KERNELS=amx asks for the AMX tiles (read once per process, so this
// forked test file sets it before the addon's first use). Where they cannot
// run, loading a model fails with a typed NativeBackendUnavailableError that
// says why, instead of running without them; where they run, the backend
// reports 'amx' and Q8_0 weights keep their reference results.
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { NativeBackendUnavailableError } from '../../src/errors.js';
import { contiguousBlocks, greedySolo, maxAbsDiff, QWEN3_TINY, readReference } from './helpers.js';

process.env.WEFT_CPU_KERNELS = 'amx';
const status = loadNativeBinding().testing.amxStatus();

it.skipIf(status.usable)('WEFT_CPU_KERNELS=amx where AMX cannot run: load rejects with NativeBackendUnavailableError saying why', async () => {
  for (const quantize of [undefined, 'q8_0'] as const) {
    const error = await CpuBackend.load(QWEN3_TINY, { threads: 1, ...(quantize && { quantize }) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NativeBackendUnavailableError);
    expect((error as NativeBackendUnavailableError).code).toBe('NATIVE_BACKEND_UNAVAILABLE');
    expect((error as Error).message).toContain('WEFT_CPU_KERNELS=amx, but the AMX kernels cannot run here: ');
    expect((error as Error).message).toContain(status.reason);
  }
});

it.skipIf(!status.usable)('WEFT_CPU_KERNELS=amx runs the AMX tiles; Q8_0 keeps its reference results', async () => {
  const reference = readReference(QWEN3_TINY);
  const backend = await CpuBackend.load(QWEN3_TINY, { threads: 2, quantize: 'q8_0' });
  try {
    expect(backend.kernels).toBe('amx');
    await backend.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
    const c = reference.cases[2]!;
    const { firstLogits } = await greedySolo(backend, c.prompt_ids, c.greedy_ids.length, contiguousBlocks(1, 5));
    expect(maxAbsDiff(firstLogits, c.first_logits)).toBeLessThan(0.5); // as forced-kernels.test.ts: ~0.13 on this model
  } finally {
    await backend.dispose();
  }
});
