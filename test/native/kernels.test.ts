// Which kernel set a normal run picks: AVX2/FMA/F16C where the CPU has all
// three (x86-64), else the baseline one. baseline-kernels.test.ts checks the
// forced baseline case.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { QWEN3_TINY } from './helpers.js';

/** What the CPU offers, from /proc/cpuinfo; undefined where that cannot be read. */
function cpuHasAvx2Set(): boolean | undefined {
  if (process.arch !== 'x64') return false;
  if (process.platform !== 'linux') return undefined;
  const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim().split(/\s+/) ?? [];
  return ['avx2', 'fma', 'f16c'].every((f) => flags.includes(f));
}

const expected = cpuHasAvx2Set();

it.skipIf(expected === undefined || process.env.WEFT_CPU_BASELINE === '1')('a normal run uses the fastest kernel set the CPU supports', async () => {
  const backend = await CpuBackend.load(QWEN3_TINY, { threads: 1 });
  try {
    expect(backend.kernels).toBe(expected ? 'avx2' : 'baseline');
  } finally {
    await backend.dispose();
  }
});
