// Which kernel set a normal run picks: the best the CPU has, from /proc/cpuinfo
// (AVX512-VNNI, else AVX-VNNI, else AVX2/FMA/F16C, else baseline), and 'amx'
// on top of AVX512-VNNI where the AMX tiles can run (amx-kernels.test.ts).
// baseline-kernels.test.ts and forced-kernels.test.ts check forced sets.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { QWEN3_TINY } from './helpers.js';

/** The set this CPU should run, from /proc/cpuinfo; undefined where that cannot be read. */
function expectedSet(): string | undefined {
  if (process.arch !== 'x64') return 'baseline';
  if (process.platform !== 'linux') return undefined;
  const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim().split(/\s+/) ?? [];
  const has = (...names: string[]) => names.every((f) => flags.includes(f));
  if (!has('avx2', 'fma', 'f16c')) return 'baseline';
  if (has('avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni')) return loadNativeBinding().testing.amxStatus().usable ? 'amx' : 'avx512vnni';
  if (has('avx_vnni')) return 'avxvnni';
  return 'avx2';
}

const expected = expectedSet();
const forced = process.env.WEFT_CPU_BASELINE === '1' || process.env.WEFT_CPU_KERNELS !== undefined;

it.skipIf(expected === undefined || forced)('a normal run uses the fastest kernel set the CPU supports', async () => {
  const backend = await CpuBackend.load(QWEN3_TINY, { threads: 1 });
  try {
    expect(backend.kernels).toBe(expected);
  } finally {
    await backend.dispose();
  }
});
