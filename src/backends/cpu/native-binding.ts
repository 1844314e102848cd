/**
 * Loads the native addon (native/build/Release/weft_native.node).
 *
 * The addon sits in the package, not next to this file: this file runs from
 * src/ (vitest, tsx) and from the bundles dist/index.js and dist/index.cjs. So
 * we walk up from here to the folder whose package.json is named "weft".
 * WEFT_NATIVE_PATH overrides the location.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeBackendUnavailableError } from '../../errors.js';
import type { KvPrecision, StepBatch } from '../backend.js';

/** What `new CpuModel(config)` takes (checked again in native/src/cpu/binding.cc). */
export interface NativeModelConfig {
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly intermediate: number;
  readonly vocab: number;
  readonly rmsEps: number;
  readonly qkvBias: boolean;
  readonly oBias: boolean;
  readonly qkNorm: boolean;
  readonly tiedEmbeddings: boolean;
  /** 0 = full attention. */
  readonly slidingWindow: number;
  /** [headDim / 2] RoPE inverse frequencies, scaling applied. */
  readonly invFreq: Float64Array;
  readonly threads?: number;
  /** Quantize float weight matrices at load (see quantization.ts). */
  readonly quantize?: 'q8_0' | 'q4_0';
}

/** One weight the native model needs (its slot table is native/src/cpu/weights.cc). */
export interface NativeWeightSlot {
  /** Slot name, e.g. "q_proj" or "q_proj.bias": Hugging Face's tensor name without prefix and ".weight". */
  readonly kind: string;
  /** Layer index, or -1 for model-level tensors. */
  readonly layer: number;
  /** [rows, cols] for matrices, [rows] for vectors. */
  readonly shape: readonly number[];
}

/** The kernel sets of native/src/cpu/cpu_features.h, slowest first. */
export type KernelSetName = 'baseline' | 'avx2' | 'avxvnni' | 'avx512vnni';

export interface NativeCpuModel {
  readonly threads: number;
  /** The kernel set this process runs (see KernelSetName). */
  readonly kernels: KernelSetName;
  /** The weights this model needs, required ones only, model-level first. */
  weightSlots(): NativeWeightSlot[];
  /**
   * Reads one tensor into its slot. dtype: 'F32', 'F16', 'BF16', or the GGUF
   * block formats 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K' (bytes at `offset` laid out
   * as GGUF stores them, rows along ne0; matrices only). shape: [rows, cols]
   * for matrices (GGUF's [ne1, ne0]), [rows] for vectors.
   */
  loadTensor(kind: string, layer: number, path: string, offset: number, dtype: string, shape: readonly number[]): Promise<void>;
  allocateCache(numBlocks: number, blockSize: number, precision: KvPrecision): Promise<void>;
  execute(batch: StepBatch): Promise<Float32Array>;
  dispose(): void;
}

/** Test hooks (native/src/cpu/testing.cc); not used by weft itself. */
export interface NativeTesting {
  /** The kernel sets this CPU and build can run. */
  supportedKernelSets(): KernelSetName[];
  /** out[T][N] = input[T][K] @ weights^T with one kernel set's quantized kernel. */
  quantMatmul(set: KernelSetName, dtype: string, weights: Uint8Array, input: Float32Array, T: number, N: number, K: number, threads: number): Float32Array;
  dequantizeRow(dtype: string, bytes: Uint8Array, K: number): Float32Array;
  quantizeRow(dtype: 'Q8_0' | 'Q4_0', values: Float32Array): Uint8Array;
}

export interface NativeBinding {
  readonly abiVersion: number;
  readonly CpuModel: new (config: NativeModelConfig) => NativeCpuModel;
  readonly testing: NativeTesting;
}

const ABI_VERSION = 2;
const REBUILD = 'run `npm run build:native` in the weft package folder (needs cmake >= 3.15 and a C++17 compiler)';
let cached: NativeBinding | undefined;

/** Finds the weft package root by walking up from `start`. */
export function findPackageRoot(start: string): string | undefined {
  for (let dir = start; ; ) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'weft') return dir;
      } catch {
        // An unreadable package.json is not ours; keep walking.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export function nativeAddonPath(): string {
  const override = process.env.WEFT_NATIVE_PATH;
  if (override) return override;
  const here = dirname(fileURLToPath(import.meta.url));
  const root = findPackageRoot(here);
  if (!root) throw new NativeBackendUnavailableError(`cannot find the weft package folder above ${here}; ${REBUILD}`);
  return join(root, 'native', 'build', 'Release', 'weft_native.node');
}

/** The loaded addon; throws NativeBackendUnavailableError when missing or broken. */
export function loadNativeBinding(): NativeBinding {
  cached ??= loadNativeBindingFrom(nativeAddonPath());
  return cached;
}

/** Loads an addon file without caching (loadNativeBinding caches the package's own). */
export function loadNativeBindingFrom(file: string): NativeBinding {
  if (!existsSync(file)) throw new NativeBackendUnavailableError(`the native CPU backend is not built (${file} is missing); ${REBUILD}`);
  let binding: Partial<NativeBinding>;
  try {
    binding = createRequire(import.meta.url)(file) as Partial<NativeBinding>;
  } catch (cause) {
    throw new NativeBackendUnavailableError(`the native CPU backend at ${file} failed to load (${(cause as Error).message}); ${REBUILD}`, { cause });
  }
  if (binding.abiVersion !== ABI_VERSION || typeof binding.CpuModel !== 'function')
    throw new NativeBackendUnavailableError(
      `the native CPU backend at ${file} is out of date (abiVersion ${String(binding.abiVersion)}, expected ${ABI_VERSION}); ${REBUILD}`,
    );
  return binding as NativeBinding;
}
