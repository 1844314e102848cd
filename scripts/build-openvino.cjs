#!/usr/bin/env node
// Builds weft's OpenVINO addon (native/openvino -> native/openvino/build/Release/weft_openvino.node)
// when OpenVINO is found, and skips it quietly otherwise: weft installs and runs without OpenVINO.
//
// Where OpenVINO is looked for, in order:
//   1. OpenVINO_DIR: the folder holding OpenVINOConfig.cmake (an archive's runtime/cmake).
//   2. The pip wheel (`pip install openvino==2026.4.1`): python3 -c "from openvino.utils import get_cmake_path; ..."
//      (WEFT_PYTHON names another interpreter).
// --required (npm run build:openvino, CI): a missing OpenVINO or a failed build exits 1.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const required = process.argv.includes('--required');
const log = (line) => console.log(`[weft] ${line}`);

function give_up(message) {
  (required ? console.error : console.log)(`[weft] ${message}`);
  process.exit(required ? 1 : 0);
}

if (process.env.WEFT_SKIP_OPENVINO === '1') give_up('WEFT_SKIP_OPENVINO=1: not building the OpenVINO backend');

function findOpenVINO() {
  const fromEnv = process.env.OpenVINO_DIR;
  if (fromEnv) {
    if (fs.existsSync(path.join(fromEnv, 'OpenVINOConfig.cmake'))) return fromEnv;
    give_up(`OpenVINO_DIR=${fromEnv} has no OpenVINOConfig.cmake`);
  }
  const python = process.env.WEFT_PYTHON || 'python3';
  const probe = spawnSync(python, ['-c', 'from openvino.utils import get_cmake_path; print(get_cmake_path())'], { encoding: 'utf8' });
  if (probe.status === 0) {
    const dir = probe.stdout.trim();
    if (fs.existsSync(path.join(dir, 'OpenVINOConfig.cmake'))) return dir;
  }
  return undefined;
}

const dir = findOpenVINO();
if (!dir) {
  give_up(
    'OpenVINO not found, so the OpenVINO backend is not built (the CPU backend is unaffected). ' +
      'To get it: pip install openvino==2026.4.1 (or set OpenVINO_DIR to an OpenVINO archive\'s runtime/cmake), then npm run build:openvino',
  );
}
log(`building the OpenVINO backend against ${dir}`);
const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
const args = [cmakeJs, 'compile', '--directory', path.join(root, 'native', 'openvino'), '--out', path.join(root, 'native', 'openvino', 'build'), `--CDOpenVINO_DIR=${dir}`];
const result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
if (result.status !== 0) give_up('building the OpenVINO backend failed; rebuild with: npm run build:openvino');
