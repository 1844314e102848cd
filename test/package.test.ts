import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, WeftError } from '../src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = existsSync(join(root, 'dist', 'index.js')) && existsSync(join(root, 'dist', 'index.cjs'));
if (!built) console.warn('[weft tests] dist/ is not built (npm install or npm run build builds it): skipping the bundle checks');

describe('package surface', () => {
  it('exports typed errors with stable codes', () => {
    const error = new InvalidOptionError('kvCache.size', 'must be positive');
    expect(error).toBeInstanceOf(WeftError);
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe('kvCache.size: must be positive');
    expect(error.name).toBe('InvalidOptionError');
  });

  it.skipIf(!built)('the ESM and CommonJS bundles load and expose the same API', async () => {
    const esm = (await import(pathToFileURL(join(root, 'dist', 'index.js')).href)) as Record<string, unknown>;
    const cjs = createRequire(import.meta.url)(join(root, 'dist', 'index.cjs')) as Record<string, unknown>;
    for (const name of ['Pipeline', 'CpuBackend', 'createToolParser', 'createReasoningParser', 'ChatTemplate', 'WeftError', 'AbortError']) {
      expect(typeof esm[name], `ESM ${name}`).toBe('function');
      expect(typeof cjs[name], `CJS ${name}`).toBe('function');
    }
    expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).filter((k) => k !== '__esModule').sort());
  });

  it.skipIf(!built)('both bundles run the text sandbox (dist/text-worker.js) and an isolated pipeline (dist/isolated-child.js)', async () => {
    const model = join(root, 'models', 'weft-demo');
    const esm = (await import(pathToFileURL(join(root, 'dist', 'index.js')).href)) as typeof import('../src/index.js');
    const cjs = createRequire(import.meta.url)(join(root, 'dist', 'index.cjs')) as typeof import('../src/index.js');
    const messages = [{ role: 'user' as const, content: 'What is the weather in Paris?' }];
    const replies: string[] = [];
    for (const bundle of [esm, cjs]) {
      for (const isolation of ['none', 'process'] as const) {
        const pipe = await bundle.Pipeline.create({ model, threads: 1, isolation });
        try {
          replies.push((await pipe.chat(messages, { maxTokens: 8, temperature: 0 })).text);
        } finally {
          await pipe.close();
        }
      }
    }
    expect(replies[0]!.length).toBeGreaterThan(0);
    expect(new Set(replies).size).toBe(1);
  });
});
