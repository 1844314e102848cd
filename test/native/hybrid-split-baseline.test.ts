// hybrid-split-checks.ts with the baseline kernel set forced (WEFT_CPU_KERNELS
// is read once per process; this forked test file sets it before the addon's
// first use): the portable scalar code, as a CPU without AVX2 runs it.
import { describe, expect } from 'vitest';
import { hybridSplitChecks } from './hybrid-split-checks.js';

process.env.WEFT_CPU_KERNELS = 'baseline';

describe('WEFT_CPU_KERNELS=baseline', () => {
  hybridSplitChecks((kernels) => expect(kernels).toBe('baseline'));
});
