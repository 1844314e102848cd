import { defineConfig } from 'tsup';

// The library in both module systems; the CLI (bin/weft.js imports it) only as ESM.
// No source maps: the package ships no sources to map to.
const common = { sourcemap: false, target: 'node20', shims: true } as const;

export default defineConfig([
  { ...common, entry: { index: 'src/index.ts' }, format: ['esm', 'cjs'], dts: { entry: { index: 'src/index.ts' } }, clean: true },
  { ...common, entry: { cli: 'src/cli/main.ts' }, format: ['esm'] },
]);
