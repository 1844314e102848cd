/**
 * `weft doctor`: the report's facts are checked against weft's own sources for them
 * (the loaded CPU model's kernel set, the compiled OpenVINO model's cache inputs),
 * so a report that drifts from what weft really runs fails here.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/cpu-backend.js';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { OpenVinoBackend } from '../../src/backends/openvino/openvino-backend.js';
import type { CacheLayout, DeviceEntry, DoctorReport } from '../../src/cli/doctor-report.js';
import { weftVersion } from '../../src/cli/help.js';
import { runCli } from '../../src/cli/run-cli.js';
import { DEMO_HF, DEMO_IR, describeOpenVino } from '../openvino/helpers.js';
import { testIo } from './cli-harness.js';

async function doctor(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = testIo({ env: {} });
  const code = await runCli(['doctor', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

describe('weft doctor', () => {
  it('--json: versions, and the kernel set a CPU model really runs with, among those this CPU can run', async () => {
    const { code, out } = await doctor('--json');
    expect(code).toBe(0);
    const report = JSON.parse(out) as DoctorReport;
    expect(report.weft).toBe(weftVersion());
    expect(report.node).toBe(process.version);
    expect(report.platform).toBe(`${process.platform}-${process.arch}`);
    if (!('kernels' in report.cpuBackend)) throw new Error(`CPU backend unavailable: ${report.cpuBackend.reason}`);
    const model = await CpuBackend.load(DEMO_HF, { threads: 1 });
    expect(report.cpuBackend.kernels).toBe(model.kernels);
    await model.dispose();
    const testing = loadNativeBinding().testing;
    expect(report.cpuBackend.supportedKernelSets).toEqual(testing.supportedKernelSets());
    for (const feature of report.cpuBackend.cpuFeatures) expect(testing.cpuFlags()).toContain(feature);
    expect(report.cpuBackend.forcedBy).toBeUndefined();
  });

  it('takes no arguments, and --model needs a value: usage errors (exit 2)', async () => {
    const extra = await doctor('now');
    expect(extra.code).toBe(2);
    expect(extra.err).toContain('doctor takes no arguments');
    expect((await doctor('--model', '')).code).toBe(2);
    expect((await doctor('--help')).out).toContain('Usage: weft doctor');
  });
});

describeOpenVino('weft doctor with the OpenVINO addon', () => {
  const cpuDevice = (report: DoctorReport): DeviceEntry => {
    if (!('devices' in report.openvino)) throw new Error(`OpenVINO unavailable: ${report.openvino.reason}`);
    const devices = report.openvino.devices;
    if (!Array.isArray(devices)) throw new Error('OpenVINO listed no devices');
    const cpu = (devices as DeviceEntry[]).find((d) => d.name === 'CPU');
    if (cpu === undefined) throw new Error('no CPU device in the report');
    return cpu;
  };

  it('lists the CPU device with its plugin, full name and precisions, and each cache precision\'s layout as the compiled model has it', async () => {
    const { code, out } = await doctor('--json', '--model', DEMO_IR('int8'));
    expect(code).toBe(0);
    const report = JSON.parse(out) as DoctorReport;
    const cpu = cpuDevice(report);
    expect(cpu.plugins[0]?.buildNumber).toMatch(/^\d{4}\.\d+/);
    const property = (name: string) => cpu.properties.find((p) => p.name === name);
    expect(property('FULL_DEVICE_NAME')?.value).toMatch(/\S/);
    expect(property('OPTIMIZATION_CAPABILITIES')?.value).toContain('FP32');
    expect(property('KV_CACHE_PRECISION')?.value).toMatch(/^(u8|f16|bf16|f32|u4|i8)$/);
    // Every property is either read or carries the plugin's reason: none is silently empty-handed.
    for (const p of cpu.properties) expect(p.value !== undefined || (p.error ?? '') !== '').toBe(true);
    expect(cpu.cacheLayouts.map((l) => l.kvPrecision)).toEqual(['f32', 'f16', 'u8']);
    for (const layout of cpu.cacheLayouts) {
      if (!('blockSize' in layout)) throw new Error(`no ${layout.kvPrecision} layout: ${layout.reason}`);
      const backend = await OpenVinoBackend.load(DEMO_IR('int8'), { kvPrecision: layout.kvPrecision, threads: 1 });
      const port = (name: string) => backend.cacheInputs.find((p) => p.name === name);
      expect(layout.blockSize).toBe(backend.shape.kvBlockSize);
      expect(layout.bytesPerBlock).toBe(backend.shape.kvBlockBytes);
      expect((layout as CacheLayout).key).toEqual({ name: 'key_cache.0', type: port('key_cache.0')?.type, shape: port('key_cache.0')?.shape });
      expect(layout.value.type).toBe(port('value_cache.0')?.type);
      await backend.dispose();
    }
    const u8 = cpu.cacheLayouts.find((l) => l.kvPrecision === 'u8') as CacheLayout;
    expect(u8.key.type).toBe('u8');
  });

  it('the text form says what each precision would use, and a folder without an IR is reported, not fatal', async () => {
    const text = await doctor();
    expect(text.code).toBe(0);
    expect(text.out).toContain('device CPU');
    expect(text.out).toMatch(/kvCache\.precision 'u8' would use: \d+-token blocks, key_cache\.0 u8/);
    const empty = mkdtempSync(join(tmpdir(), 'weft-doctor-'));
    const { code, out } = await doctor('--json', '--model', empty);
    expect(code).toBe(0);
    const report = JSON.parse(out) as DoctorReport;
    if (!('layoutModel' in report.openvino)) throw new Error('OpenVINO unavailable');
    expect(report.openvino.layoutModel).toMatchObject({ available: false, reason: `${empty} has no openvino_model.xml` });
    // The device facts are still there; only the layouts say why they are missing.
    const cpu = cpuDevice(report);
    expect(cpu.properties.length).toBeGreaterThan(0);
    for (const layout of cpu.cacheLayouts) expect(layout).toMatchObject({ available: false, reason: `${empty} has no openvino_model.xml` });
  });
});
