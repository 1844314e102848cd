/**
 * Builds the prebuilt native CPU backend that the package ships (run by `npm pack`
 * and `npm publish` through the prepack script, with tsx):
 * prebuilds/<platform>-<arch>/weft_native.node and weft_native.json beside it.
 *
 * One binary serves every Node version with Node-API 8 (Node >= 12.22). It is
 * built like native/build (same flags, in its own folder) and stripped. It links
 * the C and C++ runtimes dynamically: linked statically, GCC 12's libstdc++ pulls
 * in glibc 2.36 symbols, which shuts out Ubuntu 22.04 and RHEL 9; dynamically it
 * needs glibc 2.34 and libstdc++ from GCC 12 (both recorded in the JSON). Where it
 * does not load, the install script compiles from source instead. The JSON
 * records the fingerprint of the sources it came from; the loader refuses a
 * binary whose fingerprint no longer matches native/src (see native-binding.ts).
 *
 * This builds for the machine it runs on. Other platforms are built the same way
 * on their own CI runners (docs/install.md).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prebuiltDir, type PrebuiltInfo } from '../src/backends/cpu/native-binding.js';
import { nativeSourceHash } from '../src/package-files.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const NAPI_VERSION = (JSON.parse(readFileSync(join(root, 'native', 'package.json'), 'utf8')) as { binary: { napi_versions: number[] } }).binary
  .napi_versions[0] as number;

if (process.env.WEFT_SKIP_PREBUILD === '1') {
  console.log('[weft] WEFT_SKIP_PREBUILD=1: packing without a prebuilt native binary');
  process.exit(0);
}

const sourceHash = nativeSourceHash(root);
const buildDir = join(root, 'native', 'build-prebuilt');
const cmakeJs = createRequire(import.meta.url).resolve('cmake-js/bin/cmake-js');
const strip = process.platform === 'linux' ? ['--CDCMAKE_SHARED_LINKER_FLAGS=-s'] : [];
const started = performance.now();
console.log(`[weft] building the prebuilt native CPU backend for ${process.platform}-${process.arch} (Node-API ${NAPI_VERSION})`);
// configure, then build: configure always runs (so changed flags apply), the build is incremental.
for (const step of ['configure', 'build']) {
  const run = spawnSync(process.execPath, [cmakeJs, step, '--directory', join(root, 'native'), '--out', buildDir, ...strip], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) {
    process.stderr.write(`${run.stdout}\n${run.stderr}\n[weft] the prebuilt native build failed in cmake-js ${step} (exit ${String(run.status)})\n`);
    process.exit(1);
  }
}

const out = prebuiltDir(root);
mkdirSync(out, { recursive: true });
// Copy, then rename: a test process loading the addon meanwhile sees the old file or the new one, never half of one.
copyFileSync(join(buildDir, 'Release', 'weft_native.node'), join(out, 'weft_native.node.tmp'));
renameSync(join(out, 'weft_native.node.tmp'), join(out, 'weft_native.node'));
const info: PrebuiltInfo & Record<string, unknown> = {
  napiVersion: NAPI_VERSION,
  sourceHash,
  platform: process.platform,
  arch: process.arch,
  ...(process.platform === 'linux' ? { libc: 'glibc', ...symbolVersions(join(out, 'weft_native.node')) } : {}),
  builtWith: `node ${process.version}`,
};
writeFileSync(join(out, 'weft_native.json.tmp'), `${JSON.stringify(info, null, 2)}\n`);
renameSync(join(out, 'weft_native.json.tmp'), join(out, 'weft_native.json'));
console.log(`[weft] prebuilt ${join('prebuilds', `${process.platform}-${process.arch}`, 'weft_native.node')} in ${((performance.now() - started) / 1000).toFixed(1)} s (${sourceHash.slice(0, 19)}…)`);

/** The newest GLIBC_ and GLIBCXX_ symbol versions the binary needs (objdump from binutils); nothing without objdump. */
function symbolVersions(file: string): { glibcRequired?: string; glibcxxRequired?: string } {
  const dump = spawnSync('objdump', ['-T', file], { encoding: 'utf8' });
  if (dump.status !== 0) return {};
  const newest = (prefix: string): string | undefined => {
    const versions = [...dump.stdout.matchAll(new RegExp(`\\(${prefix}_([\\d.]+)\\)`, 'g'))].map((m) => m[1] as string);
    const key = (v: string) => v.split('.').map(Number);
    versions.sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
      return 0;
    });
    return versions.at(-1);
  };
  const glibc = newest('GLIBC');
  const glibcxx = newest('GLIBCXX');
  return { ...(glibc ? { glibcRequired: glibc } : {}), ...(glibcxx ? { glibcxxRequired: glibcxx } : {}) };
}
