import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', cli: 'src/cli/main.ts', 'ai-sdk': 'src/ai-sdk/index.ts', langchain: 'src/langchain/index.ts' },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts', 'ai-sdk': 'src/ai-sdk/index.ts', langchain: 'src/langchain/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  shims: true,
});
