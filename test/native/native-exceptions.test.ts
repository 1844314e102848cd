// C++ exceptions on the JS thread (bad_alloc, system_error) become JS errors
// instead of std::terminate. Provoked in a child process whose address space
// is capped with `ulimit -v`, so the threads' stacks and the batch copies
// cannot be mapped. The same child checks that the KV cache's RAM estimate
// counts the u8 cache's per-row params (with the limit, a wrong estimate
// fails as "out of memory" instead of touching gigabytes).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { nativeAddonPath } from '../../src/backends/cpu/native-binding.js';
import { REPO_ROOT } from './helpers.js';

const LIMIT_KB = 2_000_000; // node itself runs well inside 2 GB of address space
const ELEMENTS = 100_000_000; // 400 MB per Int32Array copy, 7 copies per batch

it.skipIf(process.platform !== 'linux')('thread and memory exhaustion reject or throw instead of killing the process; the cache RAM check counts u8 row params', () => {
  const script = join(REPO_ROOT, 'test', 'native', 'fixtures', 'exhaust-memory.cjs');
  const run = spawnSync('/bin/sh', ['-c', `ulimit -v ${LIMIT_KB} && exec "$0" "$@"`, process.execPath, script, nativeAddonPath(), String(ELEMENTS)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const out = JSON.parse(run.stdout) as { threads: string; execute: string; u8Cache: string };
  expect(out.threads).toMatch(/^Error: cannot start 1024 threads/);
  expect(out.execute).toBe('Error: out of memory');
  expect(out.u8Cache).toMatch(/^Error: a KV cache of \d+ bytes, with the weights and the current cache \(\d+ bytes in all\), exceeds the physical memory/);
});
