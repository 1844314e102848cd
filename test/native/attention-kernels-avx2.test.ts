// The AVX2 build of the attention tile kernel, forced (WEFT_CPU_KERNELS is
// read once per process; this forked test file sets it before the addon's first
// use), at head_dim 128: see attention-tile-checks.ts.
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { attentionTileChecks } from './attention-tile-checks.js';

process.env.WEFT_CPU_KERNELS = 'avx2';
const flags = process.platform === 'linux' ? (/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '') : '';
const hasAvx2 = process.arch === 'x64' && ['avx2', 'fma', 'f16c'].every((f) => flags.split(/\s+/).includes(f));

describe.skipIf(!hasAvx2)('WEFT_CPU_KERNELS=avx2', () => {
  attentionTileChecks((kernels) => expect(kernels).toBe('avx2'));
});
