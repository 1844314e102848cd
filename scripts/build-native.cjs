#!/usr/bin/env node
// Builds the native CPU backend (native/) with cmake-js during `npm install`.
// Offline-safe: package.json's "binary.napi_versions" makes cmake-js use the
// node-api-headers package instead of downloading Node headers.
// A failed build does not fail the install: the engine and any user-supplied
// backend still work, and loading the CPU backend then raises a typed
// NativeBackendUnavailable error that says how to rebuild.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
if (process.env.WEFT_SKIP_NATIVE === '1') {
  console.log('[weft] WEFT_SKIP_NATIVE=1: not building the native CPU backend');
  process.exit(0);
}
const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
const args = [cmakeJs, 'compile', '--directory', path.join(root, 'native'), '--out', path.join(root, 'native', 'build')];
const result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
if (result.status !== 0) {
  console.warn('[weft] building the native CPU backend failed; the CPU backend will be unavailable.');
  console.warn('[weft] It needs cmake >= 3.15 and a C++17 compiler. Rebuild with: npm run build:native');
  process.exit(process.env.CI ? 1 : 0);
}
if (!fs.existsSync(path.join(root, 'native', 'build', 'Release', 'weft_native.node'))) {
  console.warn('[weft] native build finished but weft_native.node is missing');
}
