// A hybrid prompt's prefill split into steps gives the same bits as in one
// step, in this process's kernel set (hybrid-split-checks.ts); the forked
// -avx2 and -baseline files force the other sets.
import { expect } from 'vitest';
import { hybridSplitChecks } from './hybrid-split-checks.js';

hybridSplitChecks((kernels) => expect(kernels).toBeDefined());
