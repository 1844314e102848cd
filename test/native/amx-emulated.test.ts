// The AMX kernel's logic (token and row tails, pairs of groups, the pair copy,
// the late tile stores, the float order) on CPUs without AMX: bench/amx built
// with --emulate, the tile instructions replaced by plain C++ with their
// documented semantics (bench/amx/emulate.h), must equal the avx512vnni, avx2
// and baseline kernels bit for bit. The real instructions are checked on an
// AMX CPU (amx-kernels.test.ts there, bench/amx; docs/performance.md).
// Needs g++ (or $CXX) and an AVX-512 VNNI CPU; skips with a message otherwise.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from './helpers.js';

const flags = process.platform === 'linux' ? (/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim().split(/\s+/) ?? []) : [];
const avx512 = process.arch === 'x64' && ['avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni', 'avx2', 'fma', 'f16c'].every((f) => flags.includes(f));
const cxx = process.env.CXX ?? 'g++';
const compiler = spawnSync(cxx, ['--version'], { encoding: 'utf8' }).status === 0;
const runnable = avx512 && compiler;
if (!runnable) console.log(`amx-emulated: skipped (${!avx512 ? 'no AVX-512 VNNI CPU' : `no ${cxx}`})`);

it.skipIf(!runnable)('the emulated AMX kernel equals the avx512vnni, avx2 and baseline kernels bit for bit', () => {
  const run = spawnSync('sh', [join(REPO_ROOT, 'bench', 'amx', 'run.sh'), '--emulate', '--quick'], { encoding: 'utf8', timeout: 240_000 });
  expect(run.stdout).toContain('AMX: usable (EMULATED');
  expect(run.stdout).toMatch(/bit-identity: 36 cases .*: all bit-identical/);
  expect(run.stdout).not.toContain('DIFFERS');
  expect(run.status).toBe(0);
}, 300_000);
