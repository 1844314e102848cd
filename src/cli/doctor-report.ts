/**
 * What `weft doctor` reports: versions, the CPU backend's features and kernel
 * set, and everything OpenVINO says about its devices, gathered without a
 * user's model (an IR folder, when given, only sharpens the cache layouts).
 *
 * Invariant: gathering never throws. Every part that cannot be read (no CPU
 * addon, no OpenVINO addon, a device property the plugin refuses, a layout
 * that does not compile) becomes a value with the reason, so one broken piece
 * never hides the rest of the report: that report is what a user sends.
 */
import { existsSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '../backends/cpu/cpu-backend.js';
import { loadNativeBinding, type KernelSetName } from '../backends/cpu/native-binding.js';
import type { KvPrecision } from '../backends/backend.js';
import { compileProperties, OpenVinoBackend } from '../backends/openvino/openvino-backend.js';
import { HOW_TO_GET_OPENVINO, loadOpenVinoBinding, openVinoAddonPath, type NativeDeviceProperty } from '../backends/openvino/native-binding.js';
import { demoModelPath, packageRoot } from '../package-files.js';
import { weftVersion } from './help.js';

/** A part of the report that could not be gathered: what went wrong and what to do about it. */
export interface Unavailable {
  readonly available: false;
  readonly reason: string;
  readonly fix?: string;
}

export interface CpuBackendReport {
  readonly available: true;
  /** The kernel set a model runs with in this process (WEFT_CPU_KERNELS may force one). */
  readonly kernels: KernelSetName;
  /** The kernel sets this CPU and build could run, slowest first. */
  readonly supportedKernelSets: readonly KernelSetName[];
  /** The instruction-set flags the kernel choice looks at, as CPUID reports them. */
  readonly cpuFeatures: readonly string[];
  readonly amx: { readonly usable: boolean; readonly reason: string };
  /** WEFT_CPU_KERNELS / WEFT_CPU_BASELINE as set, when set. */
  readonly forcedBy?: string;
}

/** One paged cache tensor as the plugin compiled it. */
export interface CacheTensor {
  readonly name: string;
  readonly type: string;
  /** [blocks, ...]; -1 for the block count, which weft sets when it allocates. */
  readonly shape: readonly number[];
}

/** The paged KV layout one device compiles for one cache precision, read back from the compiled model. */
export interface CacheLayout {
  readonly kvPrecision: KvPrecision;
  /** The compile properties weft sets for it (compileProperties). */
  readonly properties: Readonly<Record<string, string>>;
  readonly blockSize: number;
  readonly bytesPerBlock: number;
  readonly key: CacheTensor;
  readonly value: CacheTensor;
}

export interface DeviceEntry {
  readonly name: string;
  readonly plugins: ReadonlyArray<{ readonly name: string; readonly buildNumber: string; readonly description: string }>;
  readonly properties: readonly NativeDeviceProperty[];
  /** Per weft cache precision: the layout, or why it could not be derived. */
  readonly cacheLayouts: ReadonlyArray<CacheLayout | (Unavailable & { readonly kvPrecision: KvPrecision })>;
}

export interface OpenVinoReport {
  readonly available: true;
  readonly addon: string;
  readonly version: string;
  /**
   * The IR the layouts were compiled from; `yours` false: weft's demo IR, so the
   * block size and element types are what your model would use, its heads and head size its own.
   */
  readonly layoutModel: { readonly path: string; readonly yours: boolean } | Unavailable;
  readonly devices: readonly DeviceEntry[] | Unavailable;
}

export interface DoctorReport {
  readonly weft: string;
  readonly node: string;
  readonly platform: string;
  readonly os: string;
  readonly cpu: { readonly model: string; readonly logicalCores: number };
  readonly cpuBackend: CpuBackendReport | Unavailable;
  readonly openvino: OpenVinoReport | Unavailable;
}

/** The cache precisions weft offers (kvCache.precision); f32 is the OpenVINO backend's default. */
const KV_PRECISIONS: readonly KvPrecision[] = ['f32', 'f16', 'u8'];

/** The flags cpu_features.h chooses kernels by, plus the AMX / BF16 / FP16 ones the OpenVINO CPU plugin uses. */
const KERNEL_FLAGS = ['avx2', 'fma', 'f16c', 'avx_vnni', 'avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16', 'amx_tile', 'amx_int8', 'amx_bf16', 'neon', 'asimd'];

export interface DoctorOptions {
  /** An OpenVINO IR folder whose cache layout to report (default: weft's demo IR, when in this installation). */
  readonly model?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export async function gatherDoctorReport(options: DoctorOptions): Promise<DoctorReport> {
  const cpu = cpus();
  return {
    weft: weftVersion(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    os: release(),
    cpu: { model: cpu[0]?.model.trim() ?? 'unknown', logicalCores: cpu.length },
    cpuBackend: await cpuBackendReport(options.env),
    openvino: await openVinoReport(options.model),
  };
}

function unavailable(error: unknown, fix?: string): Unavailable {
  return { available: false, reason: error instanceof Error ? error.message : String(error), ...(fix !== undefined && { fix }) };
}

async function cpuBackendReport(env: DoctorOptions['env']): Promise<CpuBackendReport | Unavailable> {
  let binding;
  try {
    binding = loadNativeBinding();
  } catch (error) {
    return unavailable(error);
  }
  // The kernel set is fixed per process when the first model is made, so a real (tiny) model tells it.
  let kernels: KernelSetName | undefined;
  try {
    const model = await CpuBackend.load(demoModelPath(), { threads: 1 });
    kernels = model.kernels;
    await model.dispose();
  } catch (error) {
    return unavailable(error);
  }
  if (kernels === undefined) return { available: false, reason: 'the CPU model reported no kernel set' };
  const flags = new Set(binding.testing.cpuFlags());
  const forced = ['WEFT_CPU_KERNELS', 'WEFT_CPU_BASELINE'].filter((name) => env[name] !== undefined).map((name) => `${name}=${env[name]}`);
  return {
    available: true,
    kernels,
    supportedKernelSets: binding.testing.supportedKernelSets(),
    cpuFeatures: KERNEL_FLAGS.filter((flag) => flags.has(flag)),
    amx: binding.testing.amxStatus(),
    ...(forced.length > 0 && { forcedBy: forced.join(' ') }),
  };
}

/** The reason without the how-to that every OpenVinoUnavailableError message ends with (it is `fix`). */
function splitReason(error: unknown): Unavailable {
  const message = error instanceof Error ? error.message : String(error);
  if (!message.includes(HOW_TO_GET_OPENVINO)) return { available: false, reason: message, fix: 'rebuild the addon: npm run build:openvino in the weft package folder' };
  return { available: false, reason: message.replace(HOW_TO_GET_OPENVINO, '').replace(/[\s:;,]+$/, ''), fix: HOW_TO_GET_OPENVINO };
}

async function openVinoReport(model: string | undefined): Promise<OpenVinoReport | Unavailable> {
  let binding;
  try {
    binding = loadOpenVinoBinding();
  } catch (error) {
    return splitReason(error);
  }
  const layoutModel = layoutModelFor(model);
  let names: string[];
  try {
    names = binding.availableDevices();
  } catch (error) {
    return { available: true, addon: openVinoAddonPath(), version: binding.openvinoVersion, layoutModel, devices: unavailable(error) };
  }
  const devices: DeviceEntry[] = [];
  for (const name of names) {
    let described;
    try {
      described = binding.describeDevice(name);
    } catch (error) {
      described = { plugins: [], properties: [{ name: 'describeDevice', error: (error as Error).message }] };
    }
    const cacheLayouts = [];
    for (const kvPrecision of KV_PRECISIONS) cacheLayouts.push(await cacheLayout(layoutModel, name, kvPrecision));
    devices.push({ name, plugins: described.plugins, properties: described.properties, cacheLayouts });
  }
  return { available: true, addon: openVinoAddonPath(), version: binding.openvinoVersion, layoutModel, devices };
}

function layoutModelFor(model: string | undefined): OpenVinoReport['layoutModel'] {
  if (model !== undefined) {
    if (!existsSync(join(model, 'openvino_model.xml'))) return { available: false, reason: `${model} has no openvino_model.xml`, fix: 'pass an OpenVINO IR folder to --model' };
    return { path: model, yours: true };
  }
  const root = packageRoot();
  const demo = root === undefined ? undefined : join(root, 'models', 'weft-demo-openvino', 'f32');
  if (demo !== undefined && existsSync(join(demo, 'openvino_model.xml'))) return { path: demo, yours: false };
  return { available: false, reason: 'no IR to compile: the demo IR (models/weft-demo-openvino) ships only in a clone of weft', fix: 'pass an OpenVINO IR folder: weft doctor --model <dir>' };
}

/** Compiles `layoutModel` on `device` for one cache precision and reads the cache inputs back, as a pipeline would. */
async function cacheLayout(layoutModel: OpenVinoReport['layoutModel'], device: string, kvPrecision: KvPrecision): Promise<CacheLayout | (Unavailable & { kvPrecision: KvPrecision })> {
  if ('available' in layoutModel) return { ...layoutModel, kvPrecision };
  let backend: OpenVinoBackend | undefined;
  try {
    backend = await OpenVinoBackend.load(layoutModel.path, { device: `openvino:${device}`, kvPrecision, threads: 1 });
    const tensor = (name: string): CacheTensor => {
      const port = backend!.cacheInputs.find((p) => p.name === name);
      if (port === undefined) throw new Error(`the compiled model has no ${name}`);
      return { name, type: port.type, shape: port.shape };
    };
    return {
      kvPrecision,
      properties: compileProperties(device, { kvPrecision, threads: 1 }),
      blockSize: backend.shape.kvBlockSize!,
      bytesPerBlock: backend.shape.kvBlockBytes!,
      key: tensor('key_cache.0'),
      value: tensor('value_cache.0'),
    };
  } catch (error) {
    return { ...unavailable(error), kvPrecision };
  } finally {
    await backend?.dispose();
  }
}
