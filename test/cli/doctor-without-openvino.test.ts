// `weft doctor` where the OpenVINO addon is missing or broken, with the AVX2 kernels forced
// (WEFT_CPU_KERNELS is read once per process, so this forked file sets it before the CPU
// addon's first use): the report still comes, exit 0, with the reason and what to do.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { DoctorReport, Unavailable } from '../../src/cli/doctor-report.js';
import { runCli } from '../../src/cli/run-cli.js';
import { testIo } from './cli-harness.js';

process.env.WEFT_CPU_KERNELS = 'avx2';
const flags = process.platform === 'linux' ? (/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '') : '';
const hasAvx2 = process.arch === 'x64' && ['avx2', 'fma', 'f16c'].every((f) => flags.split(/\s+/).includes(f));
const saved = process.env.WEFT_OPENVINO_NATIVE_PATH;
afterAll(() => {
  if (saved === undefined) delete process.env.WEFT_OPENVINO_NATIVE_PATH;
  else process.env.WEFT_OPENVINO_NATIVE_PATH = saved;
});

async function report(addon: string): Promise<{ code: number; json: DoctorReport; text: string }> {
  process.env.WEFT_OPENVINO_NATIVE_PATH = addon;
  const io = testIo({ env: { WEFT_CPU_KERNELS: 'avx2' } });
  const code = await runCli(['doctor', '--json'], io);
  const textIo = testIo({ env: { WEFT_CPU_KERNELS: 'avx2' } });
  await runCli(['doctor'], textIo);
  return { code, json: JSON.parse(io.out()) as DoctorReport, text: textIo.out() };
}

it.skipIf(!hasAvx2)('a missing addon: the path, and how to get it; the CPU backend runs the forced AVX2 set', async () => {
  const missing = join(tmpdir(), 'no-such-dir', 'weft_openvino.node');
  const { code, json, text } = await report(missing);
  expect(code).toBe(0);
  expect(json.openvino).toMatchObject({ available: false });
  const ov = json.openvino as Unavailable;
  expect(ov.reason).toBe(`the OpenVINO backend is not built (${missing} is missing)`);
  expect(ov.fix).toContain('pip install openvino==2026.4.1');
  expect(ov.fix).toContain('npm run build:openvino');
  expect(json.cpuBackend).toMatchObject({ available: true, kernels: 'avx2', forcedBy: 'WEFT_CPU_KERNELS=avx2' });
  expect(text).toContain('the addon did not load');
  expect(text).toContain('kernels: avx2 (forced by WEFT_CPU_KERNELS=avx2)');
});

it('a file that is no addon: the loader\'s own message', async () => {
  const broken = join(mkdtempSync(join(tmpdir(), 'weft-doctor-')), 'weft_openvino.node');
  writeFileSync(broken, 'not a shared object');
  const { code, json } = await report(broken);
  expect(code).toBe(0);
  const ov = json.openvino as Unavailable;
  expect(ov.available).toBe(false);
  expect(ov.reason).toMatch(new RegExp(`^the OpenVINO backend at ${broken.replace(/[.]/g, '\\.')} failed to load \\(.+\\)$`));
  expect(ov.fix).toContain('npm run build:openvino');
});
