/**
 * Loads the native addon. Where it is looked for, in order:
 * 1. WEFT_NATIVE_PATH, if set (that file and nothing else);
 * 2. the prebuilt binary shipped in the package, prebuilds/<platform>-<arch>/weft_native.node,
 *    unless WEFT_BUILD_FROM_SOURCE=1, and only while its weft_native.json records the
 *    fingerprint of the native sources next to it (so a stale binary is never loaded);
 * 3. the one compiled from source, native/build/Release/weft_native.node.
 * A candidate that fails to load (another libc, say) gives way to the next.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { NativeBackendUnavailableError } from '../../errors.js';
import type { KvPrecision, StepBatch, StepResult } from '../backend.js';
import { nativeSourceHash, packageRoot } from '../../package-files.js';

/** Where a model's weight bytes are (NativeCpuModel.weightBytes). */
export interface WeightBytes {
  readonly copied: number;
  readonly mapped: number;
  readonly hugePages: boolean;
  readonly sextets: number;
}

/** What `new CpuModel(config)` takes (checked again in native/src/cpu/binding/binding.cc). */
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
  /** [rotaryDim / 2] RoPE inverse frequencies, scaling applied. */
  readonly invFreq: Float64Array;
  /** Leading dims of each head RoPE rotates (partial RoPE); headDim when absent. */
  readonly rotaryDim?: number;
  /**
   * Hybrid models (Qwen3.5): [layers], 1 for a Gated DeltaNet layer, with the
   * shape of those layers below (native/src/cpu/model/config.h).
   */
  readonly linearLayers?: Uint8Array;
  readonly linKeyHeads?: number;
  readonly linValueHeads?: number;
  readonly linKeyDim?: number;
  readonly linValueDim?: number;
  readonly convKernel?: number;
  /** q_proj yields per head [query | gate]; attention output *= sigmoid(gate). */
  readonly attnOutputGate?: boolean;
  /** RMSNorm weights are zero-centred and applied as (1 + w): 1 is added at load. */
  readonly normPlusOne?: boolean;
  /** Qwen3-Next: the Gated DeltaNet's projections fused per key head (in_proj_qkvz, in_proj_ba). */
  readonly fusedLinearProj?: boolean;
  /**
   * Mixture-of-experts models (Qwen3-Next): [layers], 1 for a layer whose MLP
   * routes to experts, with their shape below (native/src/cpu/model/config.h).
   */
  readonly moeLayers?: Uint8Array;
  /**
   * A BERT-family encoder (native/src/cpu/model/encoder.cc) with its position
   * and token-type tables, LayerNorm epsilon and GELU form; absent for decoders.
   */
  readonly encoder?: boolean;
  readonly maxPositions?: number;
  readonly typeVocab?: number;
  readonly layerNormEps?: number;
  readonly activation?: 'gelu' | 'gelu_tanh' | 'silu';
  /** NomicBert: RoPE instead of a position table, a SwiGLU MLP (activation 'silu'), MLP biases or not (default true). */
  readonly encoderRope?: boolean;
  readonly gatedMlp?: boolean;
  readonly mlpBias?: boolean;
  readonly experts?: number;
  readonly expertsPerToken?: number;
  readonly expertIntermediate?: number;
  /** The shared expert's width; 0 or absent: none. */
  readonly sharedIntermediate?: number;
  readonly normTopkProb?: boolean;
  readonly threads?: number;
  /** Quantize float weight matrices at load (see quantization.ts). */
  readonly quantize?: 'q8_0' | 'q4_0';
  /** Always copy a step's logits into a fresh array, as where external buffers are refused (tests, benchmarks). */
  readonly copyLogits?: boolean;
}

/**
 * A hybrid model's pools (native/src/cpu/model/linear_state.h), block 0 of
 * each the null one: `stateBlocks` state slots ("linear-state", one per
 * sequence in batch.extraBlockTables) and `checkpointBlocks` copies of states
 * ("checkpoints", 0 without prefix caching), one per `checkpointInterval` tokens.
 */
export interface NativeHybridCache {
  readonly stateBlocks: number;
  readonly checkpointBlocks: number;
  readonly checkpointInterval: number;
}

/** One weight the native model needs (its slot table is native/src/cpu/model/weights.cc). */
export interface NativeWeightSlot {
  /** Slot name, e.g. "q_proj" or "q_proj.bias": Hugging Face's tensor name without prefix and ".weight". */
  readonly kind: string;
  /** Layer index, or -1 for model-level tensors. */
  readonly layer: number;
  /** [rows, cols] for matrices, [rows] for vectors. */
  readonly shape: readonly number[];
}

/**
 * The kernel sets of native/src/cpu/base/cpu_features.h, slowest first. 'amx' is
 * 'avx512vnni' plus AMX-INT8 tiles for the Q8_0 matmuls of 16+ tokens (a name
 * `kernels` reports and quantMatmul takes; not a float kernel set).
 */
export type KernelSetName = 'baseline' | 'avx2' | 'avxvnni' | 'avx512vnni' | 'amx';

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
   * for matrices (GGUF's [ne1, ne0]), [rows] for vectors. `map` (default
   * true): a matrix kept as stored, 32-byte aligned in the file, is used in
   * place from a read-only mapping of the file instead of being read
   * (native/src/cpu/model/mapped_file.h).
   */
  loadTensor(kind: string, layer: number, path: string, offset: number, dtype: string, shape: readonly number[], map?: boolean): Promise<void>;
  /** The paged KV cache of the attention layers and, for a hybrid model, its state pools. */
  allocateCache(numBlocks: number, blockSize: number, precision: KvPrecision, hybrid?: NativeHybridCache): Promise<void>;
  /**
   * The step's logits, in memory the model lends (native/common/logits_transfer.h)
   * unless external buffers are refused or copyLogits is set, and the argmax of
   * each row `batch.argmaxRows` asks for (native/src/cpu/kernels/argmax/argmax.h).
   */
  execute(batch: StepBatch): Promise<StepResult>;
  /** Detaches logits this model lent so the next step reuses their memory; false for any other array. */
  releaseLogits(logits: Float32Array): boolean;
  /** The logits buffers allocated so far, and those lent to JavaScript now. */
  readonly logitsBuffers: { readonly allocated: number; readonly lent: number };
  /**
   * Weight bytes held in the model's own memory, and used in place from file
   * mappings; `hugePages`: the copied ones lie in memory advised as
   * transparent huge pages (native/src/cpu/model/weight_arena.h); `sextets`: the
   * copied 16-bit matrices kept in 6-row groups (native/src/cpu/kernels/float/sextets.h).
   */
  readonly weightBytes: WeightBytes;
  dispose(): void;
}

/** Test hooks (native/src/cpu/binding/testing.cc); weft itself reads only cpuFlags, supportedKernelSets and amxStatus (`weft doctor`). */
export interface NativeTesting {
  /** The kernel sets this CPU and build can run. */
  supportedKernelSets(): KernelSetName[];
  /** out[T][N] = input[T][K] @ weights^T (+ bias) with one kernel set's quantized kernel; weights as GGUF rows. */
  quantMatmul(set: KernelSetName, dtype: string, weights: Uint8Array, input: Float32Array, T: number, N: number, K: number, threads: number, bias?: Float32Array): Float32Array;
  /** GGUF rows repacked into row groups (Q8_0, Q4_0) or k-groups (Q4_K, Q6_K) and unpacked again: equal to the input. */
  groupedRows(dtype: 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K', weights: Uint8Array, N: number, K: number): Uint8Array;
  /**
   * out[T][N] = input[T][K] @ weights^T (+ bias) with one kernel set's float kernel;
   * weights: N * K elements of dtype 'F32' (a Float32Array) or 'F16'/'BF16' (a Uint16Array of bits).
   */
  floatMatmul(set: KernelSetName, dtype: 'F32' | 'F16' | 'BF16', weights: Float32Array | Uint16Array, input: Float32Array, bias: Float32Array | null, T: number, N: number, K: number, threads: number): Float32Array;
  /**
   * One projection (native/src/cpu/kernels/matmul.h): several matrices on one input, one output each; weights
   * as `floatMatmul` or `quantMatmul` take them. `packTail`: a Q8_0/Q4_0 part's N % 8 tail rows packed
   * once beforehand, as the loader does (else the projection packs them per call).
   */
  project(set: KernelSetName, parts: ReadonlyArray<{ dtype: string; weights: Float32Array | Uint16Array | Uint8Array; N: number; bias?: Float32Array; packTail?: boolean }>, input: Float32Array, T: number, K: number, threads: number): Float32Array[];
  /**
   * One value head's Gated DeltaNet delta rule with one kernel set's kernel (native/src/cpu/kernels/linear/gated_delta.h):
   * state [dk][dv], qkv [tokens][dk + dk + dv] (each token's q | k | v), logDecay and beta [tokens]; the tokens given
   * to the kernel in calls of `split`, its columns in ranges of `columns`. Null when this CPU or build cannot run the set.
   */
  deltaRule(set: KernelSetName, args: {
    dk: number; dv: number; tokens: number; state: Float32Array; qkv: Float32Array; logDecay: Float32Array; beta: Float32Array;
    split: number; columns: number;
  }): { state: Float32Array; out: Float32Array } | null;
  /** The causal depthwise conv + SiLU the same way: rows [tokens][channels] (in place on a copy), taps [channels][K], window [K-1][channels]. */
  convSilu(set: KernelSetName, args: {
    channels: number; K: number; tokens: number; rows: Float32Array; taps: Float32Array; window: Float32Array; split: number; columns: number;
  }): { rows: Float32Array; window: Float32Array } | null;
  /** The CPU's instruction-set flags from CPUID (AMX, AVX512-FP16 included), /proc/cpuinfo's names. */
  cpuFlags(): string[];
  /** Whether the AMX-INT8 kernels can run here (CPUID, build, OS permission), and why not. quantMatmul('amx', 'Q8_0', ...) runs them. */
  amxStatus(): { readonly usable: boolean; readonly reason: string };
  dequantizeRow(dtype: string, bytes: Uint8Array, K: number): Float32Array;
  quantizeRow(dtype: 'Q8_0' | 'Q4_0', values: Float32Array): Uint8Array;
  /** Floats to half bits as the KV cache writes them (native/src/cpu/kernels/half/half_rows.h); null when this CPU or build has no F16C. */
  toHalf(kernel: 'baseline' | 'f16c', values: Float32Array): Uint16Array | null;
  /** The greedy pick of a row as a step takes it (native/src/cpu/kernels/argmax/argmax.h); null when this CPU or build has no AVX2. */
  argmax(kernel: 'baseline' | 'avx2', values: Float32Array): number | null;
  /** The exact GELU of a kernel set, out of place (native/src/cpu/kernels/activation/activation.h); null when this CPU or build cannot run that set. */
  geluErf(set: string, values: Float32Array): Float32Array | null;
  /**
   * The native sampling chain on one row as a step runs it (native/src/cpu/sample/sampler.h), with one
   * kernel set's row passes ('avx512': the avx512vnni set's); params as StepBatch.sampling.params' row.
   * `values` is put back as it was, or masked with `mask` (a grammar mask, StepBatch.sampling.masks) when given.
   * Null when this CPU or build cannot run the asked set's passes.
   */
  sampleRow(
    kernel: SampleKernelsName,
    values: Float32Array,
    params: Float64Array,
    seen: Int32Array,
    counted: Int32Array,
    counts: Int32Array,
    mask?: Uint32Array,
  ): { token: number; flags: number; max: number; sum: number; top: Int32Array } | null;
  /** V8's Math.exp as the native sampler computes it (native/src/cpu/sample/js_math.h), with one kernel set. */
  jsExp(kernel: SampleKernelsName, x: Float64Array): Float64Array | null;
  /** fdlibm's log (native/src/cpu/sample/js_math.h). */
  jsLog(x: Float64Array): Float64Array;
}

/** The native sampler's row passes (native/src/cpu/sample/exp_rows.h): every set gives the same bits. */
export type SampleKernelsName = 'baseline' | 'avx2' | 'avx512';

export interface NativeBinding {
  readonly abiVersion: number;
  readonly CpuModel: new (config: NativeModelConfig) => NativeCpuModel;
  /** Whether the OS gives advised memory huge pages (Linux transparent huge pages not "never"). */
  transparentHugePages(): boolean;
  readonly testing: NativeTesting;
}

const ABI_VERSION = 9;
const REBUILD =
  'run `npm rebuild weft` (with WEFT_BUILD_FROM_SOURCE=1 to compile even where a prebuilt binary exists), or `npm run build:native` in the weft package folder; compiling needs cmake >= 3.15 and a C++17 compiler';
let cached: NativeBinding | undefined;

/** What prebuilds/<platform>-<arch>/weft_native.json says about the binary beside it (written by scripts/prebuild-native.ts). */
export interface PrebuiltInfo {
  readonly napiVersion: number;
  /** nativeSourceHash() of the sources it was built from. */
  readonly sourceHash: string;
  readonly platform: string;
  readonly arch: string;
}

/** Where this platform's prebuilt binary would be, in a package folder. */
export function prebuiltDir(packageDir: string, platform: string = process.platform, arch: string = process.arch): string {
  return join(packageDir, 'prebuilds', `${platform}-${arch}`);
}

/** The addon files to try, in order, each with the reason a skipped one was passed over. */
export function nativeAddonCandidates(): { files: string[]; skipped: string[] } {
  const override = process.env.WEFT_NATIVE_PATH;
  if (override) return { files: [override], skipped: [] };
  const root = packageRoot();
  if (!root) throw new NativeBackendUnavailableError(`cannot find the weft package folder above ${import.meta.url}; ${REBUILD}`);
  const files: string[] = [];
  const skipped: string[] = [];
  const prebuilt = prebuiltDir(root);
  if (process.env.WEFT_BUILD_FROM_SOURCE === '1') {
    skipped.push('the prebuilt binary is not used (WEFT_BUILD_FROM_SOURCE=1)');
  } else if (!existsSync(join(prebuilt, 'weft_native.node'))) {
    skipped.push(`there is no prebuilt binary for ${process.platform}-${process.arch}`);
  } else {
    const stale = prebuiltMismatch(root, prebuilt);
    if (stale) skipped.push(`the prebuilt binary in ${prebuilt} is not used: ${stale}`);
    else files.push(join(prebuilt, 'weft_native.node'));
  }
  files.push(join(root, 'native', 'build', 'Release', 'weft_native.node'));
  // scripts/install.cjs leaves this log when its build from source failed.
  const log = join(root, 'native', 'build-from-source.log');
  if (existsSync(log)) skipped.push(`the build from source during npm install failed (its log: ${log})`);
  return { files, skipped };
}

/** Why the prebuilt binary must not be used with these sources, or undefined when it fits. */
function prebuiltMismatch(root: string, prebuilt: string): string | undefined {
  let info: PrebuiltInfo;
  try {
    info = JSON.parse(readFileSync(join(prebuilt, 'weft_native.json'), 'utf8')) as PrebuiltInfo;
  } catch {
    return 'its weft_native.json is missing or unreadable';
  }
  // A package without native/src ships only binaries: nothing to compare against.
  if (!existsSync(join(root, 'native', 'src'))) return undefined;
  const sources = nativeSourceHash(root);
  return info.sourceHash === sources ? undefined : `built from other native sources (${info.sourceHash.slice(0, 19)}…, these are ${sources.slice(0, 19)}…)`;
}

/** The addon file loadNativeBinding() tries first. */
export function nativeAddonPath(): string {
  return nativeAddonCandidates().files[0] as string;
}

/** The loaded addon; throws NativeBackendUnavailableError when none of the candidates loads. */
export function loadNativeBinding(): NativeBinding {
  if (cached) return cached;
  const { files, skipped } = nativeAddonCandidates();
  const failures: string[] = [...skipped];
  for (const file of files) {
    try {
      cached = loadNativeBindingFrom(file);
      return cached;
    } catch (error) {
      failures.push((error as Error).message.replace(`; ${REBUILD}`, ''));
    }
  }
  throw new NativeBackendUnavailableError(`no native CPU backend could be loaded: ${failures.join('; ')}; ${REBUILD}`);
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
