import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', cli: 'src/cli/main.ts', 'text-worker': 'src/text/sandbox/worker-entry.ts', 'isolated-child': 'src/isolation/child-entry.ts' },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  shims: true,
});
