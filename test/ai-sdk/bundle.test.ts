/** The published `weft/ai-sdk` entry: resolvable by name, ESM and CommonJS, no runtime import of @ai-sdk/provider. */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { demoModelDir, demoTools } from './demo-tools.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const built = existsSync(join(root, 'dist', 'ai-sdk.js')) && existsSync(join(root, 'dist', 'ai-sdk.cjs'));
if (!built) console.warn('[weft tests] dist/ is not built (npm install or npm run build builds it): skipping the weft/ai-sdk bundle checks');
const present = existsSync(join(demoModelDir, 'model.safetensors'));
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

describe.skipIf(!built)('the weft/ai-sdk bundle', () => {
  const require = createRequire(import.meta.url);

  it('resolves through the package exports and loads as ESM and CommonJS', async () => {
    expect(require.resolve('weft/ai-sdk')).toBe(join(root, 'dist', 'ai-sdk.cjs'));
    const esm = (await import(pathToFileURL(join(root, 'dist', 'ai-sdk.js')).href)) as Record<string, unknown>;
    const cjs = require(join(root, 'dist', 'ai-sdk.cjs')) as Record<string, unknown>;
    for (const name of ['createWeft', 'weft', 'WeftLanguageModel', 'toChatMessages']) {
      expect(typeof esm[name], `ESM ${name}`).toBe('function');
      expect(typeof cjs[name], `CJS ${name}`).toBe('function');
    }
    // Types only: the optional peer dependency is never loaded at run time.
    for (const file of ['ai-sdk.js', 'ai-sdk.cjs']) expect(readFileSync(join(root, 'dist', file), 'utf8')).not.toMatch(/(from|require\()\s*["']@ai-sdk\/provider/);
  });

  it.skipIf(!present)('a CommonJS pipeline works with the CommonJS provider (each bundle has its own Pipeline class)', async () => {
    const { Pipeline } = require(join(root, 'dist', 'index.cjs')) as typeof import('../../src/index.js');
    const { weft } = require(join(root, 'dist', 'ai-sdk.cjs')) as typeof import('../../src/ai-sdk/index.js');
    const pipe = await Pipeline.create({ model: demoModelDir, threads: 1, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
    try {
      const result = await generateText({ model: weft(pipe), prompt: 'What is 37 times 12.5?', tools: demoTools(), temperature: 0 });
      expect(result.toolCalls.map((call) => [call.toolName, call.input])).toEqual([['calculator', { operation: 'multiply', a: 37, b: 12.5 }]]);
    } finally {
      await pipe.close();
    }
  });
});
