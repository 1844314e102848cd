#!/usr/bin/env node
// weft's `npm install` step. Offline-safe, and short where there is nothing to do.
//
// 1. In a clone (src/ and tsup present) it builds dist/ (tsup), since `prepare`
//    is not used: npm lists a prepare script in its install-scripts warning even
//    for tarball installs, where it never runs. The tarball has dist/ built by prepack.
// 2. The native CPU backend: the package ships a prebuilt binary for linux-x64
//    (prebuilds/, made by prepack). If one fits this platform and loads, nothing is
//    compiled. Otherwise (another platform, a libc it cannot load with, or
//    WEFT_BUILD_FROM_SOURCE=1) it compiles native/ with cmake-js, against the
//    node-api-headers package (no download), and says what it compiled.
//    A failed compile fails the install, loudly: npm 11 hides the output of an
//    install script that exits 0, so a warning would never be seen (README,
//    "Installing as a dependency"). WEFT_SKIP_NATIVE=1 installs without the addon.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const say = (line) => console.log(`[weft] ${line}`);
const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

// A clone has src/; a packed package has dist/ built and no src/.
const isClone = fs.existsSync(path.join(root, 'src', 'index.ts'));

function buildDistInClone() {
  if (!isClone) return;
  let tsup;
  try {
    tsup = require.resolve('tsup/dist/cli-default.js', { paths: [root] });
  } catch {
    say('src/ is here but tsup is not installed (dev dependencies omitted?): dist/ not rebuilt');
    return;
  }
  const started = performance.now();
  const run = spawnSync(process.execPath, [tsup, '--silent'], { stdio: 'inherit', cwd: root });
  if (run.status !== 0) {
    console.error('[weft] building dist/ with tsup failed (see above)');
    process.exit(1);
  }
  say(`built dist/ from src/ in ${seconds(started)}`);
}

/** Why the shipped prebuilt binary cannot be used here, or undefined when it loads. */
function prebuiltProblem() {
  if (process.env.WEFT_BUILD_FROM_SOURCE === '1') return 'WEFT_BUILD_FROM_SOURCE=1 asks for a build from source';
  // Developers change native/src: their addon is always compiled from it.
  if (isClone) return 'a clone of weft (src/ is here)';
  const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
  const file = path.join(dir, 'weft_native.node');
  if (!fs.existsSync(file)) return `no prebuilt binary for ${process.platform}-${process.arch} in this package`;
  try {
    const binding = require(file);
    if (typeof binding.CpuModel !== 'function') return `the prebuilt ${file} is not weft's addon`;
  } catch (error) {
    return `the prebuilt ${file} does not load here (${String(error.message).split('\n')[0]})`;
  }
  return undefined;
}

function buildNativeFromSource(reason) {
  const sources = fs.readdirSync(path.join(root, 'native', 'src'), { recursive: true }).filter((f) => String(f).endsWith('.cc'));
  say(`${reason}: compiling the native CPU backend from native/src (${sources.length} C++ files, about 30 s)`);
  let cmakeJs;
  try {
    cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
  } catch {
    fail('the cmake-js package is missing');
  }
  const out = path.join(root, 'native', 'build');
  const started = performance.now();
  const run = spawnSync(process.execPath, [cmakeJs, 'compile', '--directory', path.join(root, 'native'), '--out', out], {
    cwd: root,
    encoding: 'utf8',
  });
  // Kept only after a failure: the loader then points at it (see native-binding.ts).
  const log = path.join(root, 'native', 'build-from-source.log');
  const file = path.join(out, 'Release', 'weft_native.node');
  if (run.status !== 0 || !fs.existsSync(file)) {
    const text = `${run.stdout ?? ''}\n${run.stderr ?? ''}${run.error ? `\n${run.error.message}` : ''}\n`;
    try {
      fs.writeFileSync(log, text);
    } catch {
      // The log is a convenience; the message below says what matters.
    }
    const tail = text.trim().split('\n').slice(-15).join('\n');
    fail(`compiling the native CPU backend failed (exit ${String(run.status)}), full log in ${log}:\n${tail}`);
  }
  fs.rmSync(log, { force: true });
  const compiler = /The CXX compiler identification is (.+)/.exec(run.stdout ?? '')?.[1]?.trim();
  say(`compiled ${path.relative(root, file)} from ${sources.length} C++ files${compiler ? ` with ${compiler}` : ''} in ${seconds(started)}`);
}

function fail(message) {
  console.error(`[weft] ${message}`);
  console.error('[weft] It needs cmake >= 3.15 and a C++17 compiler (Debian/Ubuntu: apt-get install cmake g++).');
  console.error('[weft] To install without the native CPU backend (custom backends only), set WEFT_SKIP_NATIVE=1.');
  process.exit(1);
}

buildDistInClone();
if (process.env.WEFT_SKIP_NATIVE === '1') {
  say('WEFT_SKIP_NATIVE=1: the native CPU backend is left out (device "cpu" will raise NativeBackendUnavailableError)');
} else {
  const problem = prebuiltProblem();
  if (problem === undefined) say(`using the prebuilt native CPU backend for ${process.platform}-${process.arch} (Node-API 8): nothing to compile`);
  else buildNativeFromSource(problem);
}
// The OpenVINO backend is optional: built only when OpenVINO is found (OpenVINO_DIR or the
// pip wheel), skipped quietly otherwise; scripts/build-openvino.cjs says where it looks.
require('./build-openvino.cjs');
