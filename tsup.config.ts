import { defineConfig } from 'tsup';

// The library in both module systems; the CLI (bin/weft.js imports it) only as ESM.
// The text sandbox's worker and the isolated pipeline's child are scripts both
// bundles start by path (dist/<name>.js, src/runtime/entry-script.ts): ESM only.
// No source maps: the package ships no sources to map to.
const common = { sourcemap: false, target: 'node20', shims: true } as const;
// The package's entry points: `weft`, `weft/ai-sdk`, `weft/langchain`, `weft/serve`, `weft/remote`, `weft/guided`.
const library = {
  index: 'src/index.ts',
  'ai-sdk': 'src/ai-sdk/index.ts',
  langchain: 'src/langchain/index.ts',
  serve: 'src/serve/index.ts',
  remote: 'src/remote/index.ts',
  guided: 'src/guided/public.ts',
};

export default defineConfig([
  { ...common, entry: library, format: ['esm', 'cjs'], dts: { entry: library }, clean: true },
  { ...common, entry: { cli: 'src/cli/main.ts' }, format: ['esm'] },
  { ...common, entry: { 'text-worker': 'src/text/sandbox/worker-entry.ts', 'isolated-child': 'src/isolation/child-entry.ts' }, format: ['esm'] },
]);
