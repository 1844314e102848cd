// hybrid-split-checks.ts with the AVX2 kernel set forced (WEFT_CPU_KERNELS is
// read once per process; this forked test file sets it before the addon's
// first use), so the AVX2 build of the Gated DeltaNet kernels runs on an
// AVX-512 machine too.
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { hybridSplitChecks } from './hybrid-split-checks.js';

process.env.WEFT_CPU_KERNELS = 'avx2';
const flags = process.platform === 'linux' ? (/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '') : '';
const hasAvx2 = process.arch === 'x64' && ['avx2', 'fma', 'f16c'].every((f) => flags.split(/\s+/).includes(f));

describe.skipIf(!hasAvx2)('WEFT_CPU_KERNELS=avx2', () => {
  hybridSplitChecks((kernels) => expect(kernels).toBe('avx2'));
});
