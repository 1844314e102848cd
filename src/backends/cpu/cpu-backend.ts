/**
 * The native CPU backend: a Llama-family forward pass over a paged KV cache,
 * in C++ (native/src/cpu), run off the main thread. Hybrid models (Qwen3.5)
 * add a second pool, their linear-attention states (docs/hybrid.md).
 */
import { availableParallelism, totalmem } from 'node:os';
import { BackendError, InvalidOptionError, ModelLoadError, NativeBackendUnavailableError } from '../../errors.js';
import type { ModelConfig } from '../../model-files/config.js';
import { loadModelConfig } from '../../model-files/config.js';
import { encoderTensorNaming } from '../../model-files/encoder-config.js';
import { ropeInverseFrequencies } from '../../model-files/rope.js';
import { openSafetensorsFolder } from '../../model-files/safetensors.js';
import { openGgufModel } from '../../model-files/gguf/open.js';
import { type LoadableTensor, planWeights, type WeightSlot } from '../../model-files/weights.js';
import { NativeQueue } from '../native-queue.js';
import type { Backend, CacheConfig, ExtraPoolSpec, LoadProgress, ModelShape, StepBatch, StepResult } from '../backend.js';
import { type KernelSetName, loadNativeBinding, type NativeCpuModel, type NativeHybridCache, type NativeModelConfig, type WeightBytes } from './native-binding.js';
import { checkQuantization, type WeightQuantization } from './quantization.js';

export interface CpuBackendOptions {
  /** Worker threads for one step (default: the available cores). */
  readonly threads?: number;
  readonly onProgress?: (progress: LoadProgress) => void;
  /**
   * Quantize float (F32/F16/BF16) weight matrices at load to 'q8_0' or 'q4_0'
   * (matrices whose rows are not whole 32-weight blocks keep their dtype).
   * Default: keep the weights as stored. See docs/cpu-backend.md.
   */
  readonly quantize?: WeightQuantization;
  /**
   * Copy each step's logits into a fresh array instead of lending native
   * memory (what happens anyway where external buffers are refused, as in
   * Electron). For tests and benchmarks.
   */
  readonly copyLogits?: boolean;
  /**
   * Use weights that stay as stored (same dtype and layout, 32-byte aligned in
   * the file: GGUF's 16-bit and float32 matrices) from a read-only memory
   * mapping of the file, so loading reads nothing. The file must then not be
   * truncated or rewritten in place while the model runs. false reads every
   * weight into the model's memory, on huge pages where the OS has them.
   * Default: false where it does (Linux with transparent huge pages: one-token
   * decode of an F16 model ran 1.22x faster read than mapped), else true.
   * See docs/cpu-backend.md#memory.
   */
  readonly mmap?: boolean;
}

/** What the native model takes for a config (checked again in native/src/cpu/binding/binding.cc). */
export function nativeModelConfig(
  config: ModelConfig,
  threads: number,
  quantize?: WeightQuantization,
  invFreq: Float64Array = ropeInverseFrequencies(config),
  copyLogits?: boolean,
): NativeModelConfig {
  return {
    hidden: config.hiddenSize,
    layers: config.numLayers,
    heads: config.numHeads,
    kvHeads: config.numKvHeads,
    headDim: config.headDim,
    intermediate: config.intermediateSize,
    vocab: config.vocabSize,
    rmsEps: config.rmsNormEps,
    qkvBias: config.qkvBias,
    oBias: config.oBias,
    qkNorm: config.qkNorm,
    tiedEmbeddings: config.tieWordEmbeddings,
    slidingWindow: config.slidingWindow ?? 0,
    invFreq,
    ...(config.rotaryDim !== undefined && { rotaryDim: config.rotaryDim }),
    ...hybridFields(config),
    ...mixtureOfExpertsFields(config),
    ...encoderFields(config),
    threads,
    ...(quantize !== undefined && { quantize }),
    ...(copyLogits !== undefined && { copyLogits }),
  };
}

/** A hybrid model's fields of NativeModelConfig (none for the others). */
function hybridFields(config: ModelConfig): Partial<NativeModelConfig> {
  const linear = config.linearAttention;
  if (linear === undefined) return {};
  return {
    linearLayers: Uint8Array.from(linear.layers, (isLinear) => (isLinear ? 1 : 0)),
    linKeyHeads: linear.numKeyHeads,
    linValueHeads: linear.numValueHeads,
    linKeyDim: linear.keyHeadDim,
    linValueDim: linear.valueHeadDim,
    convKernel: linear.convKernel,
    attnOutputGate: true,
    normPlusOne: true,
    ...(linear.fusedProjections === true && { fusedLinearProj: true }),
  };
}

/** An encoder's fields of NativeModelConfig (none for decoders). */
function encoderFields(config: ModelConfig): Partial<NativeModelConfig> {
  const encoder = config.encoder;
  if (encoder === undefined) return {};
  return {
    encoder: true,
    maxPositions: config.maxPositionEmbeddings,
    typeVocab: encoder.typeVocabSize,
    layerNormEps: encoder.layerNormEps,
    activation: encoder.activation === 'swiglu' ? 'silu' : encoder.activation,
    ...(encoder.positions === 'rotary' && { encoderRope: true }),
    ...(encoder.activation === 'swiglu' && { gatedMlp: true }),
    mlpBias: encoder.mlpBias,
  };
}

/** A mixture-of-experts model's fields of NativeModelConfig (none for the others). */
function mixtureOfExpertsFields(config: ModelConfig): Partial<NativeModelConfig> {
  const moe = config.mixtureOfExperts;
  if (moe === undefined) return {};
  return {
    moeLayers: Uint8Array.from(moe.layers, (routed) => (routed ? 1 : 0)),
    experts: moe.numExperts,
    expertsPerToken: moe.expertsPerToken,
    expertIntermediate: moe.expertIntermediateSize,
    sharedIntermediate: moe.sharedExpertIntermediateSize,
    normTopkProb: moe.normTopKProb,
  };
}

/**
 * The engine's second pool for a hybrid model: one block per running sequence
 * holding its linear-attention state in every Gated DeltaNet layer
 * (native/src/cpu/model/linear_state.h): a conv window of (convKernel - 1)
 * inputs of every channel and a keyHeadDim x valueHeadDim state per value
 * head, float32.
 */
export const LINEAR_STATE_POOL = 'linear-state';
/**
 * The third pool, with prefix caching: copies of the state every
 * checkpointInterval tokens (DEFAULT_CHECKPOINT_INTERVAL unless the pipeline
 * sets kvCache.checkpointInterval), so a prefix hit resumes from the copy at
 * its end (docs/hybrid.md).
 */
export const CHECKPOINT_POOL = 'checkpoints';
export const DEFAULT_CHECKPOINT_INTERVAL = 256;

function linearStatePools(config: ModelConfig): ExtraPoolSpec[] {
  const linear = config.linearAttention;
  if (linear === undefined) return [];
  const layers = linear.layers.filter(Boolean).length;
  const convChannels = 2 * linear.numKeyHeads * linear.keyHeadDim + linear.numValueHeads * linear.valueHeadDim;
  const perLayer = (linear.convKernel - 1) * convChannels + linear.numValueHeads * linear.keyHeadDim * linear.valueHeadDim;
  const bytesPerBlock = 4 * layers * perLayer;
  return [
    { name: LINEAR_STATE_POOL, blockSize: Infinity, bytesPerBlock },
    { name: CHECKPOINT_POOL, blockSize: DEFAULT_CHECKPOINT_INTERVAL, bytesPerBlock, checkpoints: true },
  ];
}

/** Layers that keep attention KV rows: all but a hybrid model's Gated DeltaNet layers. */
function attentionLayers(config: ModelConfig): number {
  return config.numLayers - (config.linearAttention?.layers.filter(Boolean).length ?? 0);
}

// Declared with the model readers that make it (model-files/weights.ts), below this backend; exported here as before.
export type { LoadableTensor } from '../../model-files/weights.js';

/**
 * Reads every planned tensor into the native model, reporting progress. A
 * tensor the native loader refuses (dtype, shape, block size, bytes outside
 * the file) is a ModelLoadError naming the file and the tensor. The caller
 * disposes the model on failure.
 */
export async function loadPlannedWeights(
  native: NativeCpuModel,
  plan: readonly LoadableTensor[],
  progress: (progress: LoadProgress) => void = () => {},
  mmap = true,
): Promise<void> {
  const total = plan.reduce((sum, t) => sum + t.info.byteLength, 0);
  let loaded = 0;
  progress({ phase: 'weights', loaded, total });
  for (const tensor of plan) {
    const { kind, layer, info } = tensor;
    const prepared = tensor.prepare ? await tensor.prepare() : undefined;
    const from = prepared?.info ?? info;
    try {
      // A prepared tensor lies in a temporary file, removed right after: never mapped.
      await native.loadTensor(kind, layer, from.file, from.offset, from.dtype, from.shape, mmap && prepared === undefined);
    } catch (cause) {
      throw new ModelLoadError(`${info.file} (tensor ${info.name}): ${(cause as Error).message}`, info.file, info.name, { cause });
    } finally {
      await prepared?.release();
    }
    loaded += info.byteLength;
    progress({ phase: 'weights', loaded, total });
  }
  progress({ phase: 'done', loaded, total });
}

/**
 * float32 activations native/src/cpu/model/forward.cc keeps per scheduled token: the
 * residual and normed rows (2 x hidden), q and the attention output (2 x q),
 * k and v, gate and up (2 x intermediate), and RoPE's cos/sin (headDim).
 */
function stepBytesPerToken(config: ModelConfig): number {
  const q = config.numHeads * config.headDim;
  const kv = config.numKvHeads * config.headDim;
  const base = 2 * config.hiddenSize + 2 * q + 2 * kv + 2 * config.intermediateSize + config.headDim;
  const linear = config.linearAttention;
  if (linear === undefined) return 4 * base;
  // Hybrid: q_proj's [query | gate] rows and the gates (3 x q), and a Gated
  // DeltaNet layer's channels, z, beta, decay and output.
  const value = linear.numValueHeads * linear.valueHeadDim;
  const channels = 2 * linear.numKeyHeads * linear.keyHeadDim + value;
  return 4 * (base + 3 * q + channels + 2 * value + 2 * linear.numValueHeads);
}

function checkThreads(requested: number | undefined): number {
  const threads = requested ?? availableParallelism();
  if (!Number.isSafeInteger(threads) || threads < 1 || threads > 1024)
    throw new InvalidOptionError('threads', 'must be an integer in [1, 1024]');
  return threads;
}

export class CpuBackend implements Backend {
  readonly shape: ModelShape;
  readonly config: ModelConfig;
  /** Steps and cache allocation run one at a time, in call order. */
  readonly #queue: NativeQueue<NativeCpuModel>;
  #cacheAllocated = false;

  private constructor(native: NativeCpuModel, config: ModelConfig) {
    this.#queue = new NativeQueue(native, 'CPU');
    this.config = config;
    this.shape = {
      vocabSize: config.vocabSize,
      numLayers: attentionLayers(config),
      numKvHeads: config.numKvHeads,
      headDim: config.headDim,
      maxContextLength: config.maxPositionEmbeddings,
      stepBytesPerToken: stepBytesPerToken(config),
      // Half the memory of f32 for no difference in greedy output on the fixtures (docs/cpu-backend.md);
      // an embedding model's cache only lives while a text is read, and its vectors are compared to 1e-4.
      defaultKvPrecision: config.embeddingModel === true ? 'f32' : 'f16',
      hiddenSize: config.hiddenSize,
      ...(config.encoder !== undefined && { wholeSequences: true, tokenTypes: config.encoder.typeVocabSize }),
      ...(config.linearAttention !== undefined && { extraPools: linearStatePools(config) }),
    };
  }

  /** Loads a Hugging Face model folder (config.json + safetensors). */
  static async load(modelDir: string, options: CpuBackendOptions = {}): Promise<CpuBackend> {
    checkLoadArguments('modelDir', modelDir, options, "CpuBackend.load('models/weft-demo', { threads, quantize, mmap, ... })");
    const threads = checkThreads(options.threads);
    const quantize = checkQuantization(options.quantize);
    const progress = options.onProgress ?? (() => {});
    progress({ phase: 'config', loaded: 0, total: 0 });
    const config = await loadModelConfig(modelDir);
    const tensors = await openSafetensorsFolder(modelDir);
    const native = CpuBackend.#createNative(nativeModelConfig(config, threads, quantize, undefined, options.copyLogits), modelDir);
    // An encoder's tensors are BertModel's, bare (as sentence-transformers saves them) or under "bert." / "roberta." in a task model.
    const naming = config.encoder === undefined ? undefined : encoderTensorNaming({ architecture: config.architecture, encoder: config.encoder });
    const taskPrefix = ['bert.', 'roberta.'].find((p) => tensors.has(`${p}embeddings.word_embeddings.weight`));
    const prefix = config.encoder !== undefined && taskPrefix !== undefined ? taskPrefix : config.weightPrefix;
    return CpuBackend.#loadWeights(native, config, (slots) => planWeights(slots, tensors, modelDir, prefix, naming), progress, options.mmap);
  }

  /** Loads a GGUF file (llama, mistral, qwen2, qwen3, qwen35; see docs/gguf.md, docs/hybrid.md). */
  static async loadGguf(file: string, options: CpuBackendOptions = {}): Promise<CpuBackend> {
    checkLoadArguments('file', file, options, "CpuBackend.loadGguf('model.Q4_K_M.gguf', { threads, quantize, mmap, ... })");
    const threads = checkThreads(options.threads);
    const quantize = checkQuantization(options.quantize);
    const progress = options.onProgress ?? (() => {});
    progress({ phase: 'config', loaded: 0, total: 0 });
    const model = openGgufModel(file);
    const native = CpuBackend.#createNative(nativeModelConfig(model.config, threads, quantize, model.invFreq, options.copyLogits), file);
    return CpuBackend.#loadWeights(native, model.config, model.plan, progress, options.mmap);
  }

  static #createNative(config: NativeModelConfig, source: string): NativeCpuModel {
    const binding = loadNativeBinding();
    try {
      return new binding.CpuModel(config);
    } catch (cause) {
      // WEFT_CPU_KERNELS=amx where AMX cannot run (binding.cc): the forced kernels are unavailable, not the model.
      if ((cause as { code?: unknown }).code === 'AMX_UNAVAILABLE') throw new NativeBackendUnavailableError((cause as Error).message, { cause });
      throw new ModelLoadError(`${source}: the native model rejected the config: ${(cause as Error).message}`, source, undefined, { cause });
    }
  }

  /** Plans the native model's slots with `planFor` and loads every planned tensor; the model is disposed on any failure. */
  static async #loadWeights(
    native: NativeCpuModel,
    config: ModelConfig,
    planFor: (slots: readonly WeightSlot[]) => LoadableTensor[],
    progress: (progress: LoadProgress) => void,
    mmap: boolean | undefined,
  ): Promise<CpuBackend> {
    try {
      const plan = planFor(native.weightSlots());
      // Checked before a byte is read: a small (e.g. sparse) file may declare more weights than the machine holds.
      const bytes = plan.reduce((sum, t) => sum + t.info.byteLength, 0);
      if (bytes > totalmem())
        throw new ModelLoadError(`the weights take ${bytes} bytes, more than this machine's memory (${totalmem()} bytes)`, plan[0]?.info.file ?? '', undefined);
      await loadPlannedWeights(native, plan, progress, mmap ?? !loadNativeBinding().transparentHugePages());
    } catch (error) {
      native.dispose(); // also when onProgress throws: nothing is left behind
      throw error;
    }
    return new CpuBackend(native, config);
  }

  /** Threads a step uses. */
  get threads(): number {
    return this.#queue.native?.threads ?? 0;
  }

  /**
   * The matmul and attention kernels this process runs: 'avx2' on x86-64 CPUs
   * with AVX2/FMA/F16C, else 'baseline' (forced by WEFT_CPU_KERNELS=baseline or
   * WEFT_CPU_BASELINE=1); 'amx' is 'avx512vnni' plus AMX-INT8 tiles for Q8_0
   * matmuls of 16+ tokens. See docs/cpu-backend.md.
   */
  get kernels(): KernelSetName | undefined {
    return this.#queue.native?.kernels;
  }

  allocateCache(config: CacheConfig): Promise<void> {
    return this.#enqueue(async (native) => {
      if (!['f32', 'f16', 'u8'].includes(config.precision))
        throw new InvalidOptionError('precision', `KV cache precision ${String(config.precision)} is not supported by the CPU backend (f32, f16, u8)`);
      try {
        await native.allocateCache(config.numBlocks, config.blockSize, config.precision, this.#hybridCache(config));
      } catch (cause) {
        throw new BackendError(`allocating the KV cache failed: ${(cause as Error).message}`, { cause });
      }
      this.#cacheAllocated = true;
    });
  }

  /** A hybrid model's state pools from the cache config (none for the others). */
  #hybridCache(config: CacheConfig): NativeHybridCache | undefined {
    if (this.config.linearAttention === undefined) return undefined;
    const stateBlocks = config.extraPoolBlocks?.[LINEAR_STATE_POOL];
    if (stateBlocks === undefined)
      throw new Error(`a hybrid model needs the ${LINEAR_STATE_POOL} pool (CacheConfig.extraPoolBlocks, sized from shape.extraPools)`);
    const checkpointBlocks = config.extraPoolBlocks?.[CHECKPOINT_POOL] ?? 0;
    const checkpointInterval = config.extraPoolBlockSizes?.[CHECKPOINT_POOL] ?? DEFAULT_CHECKPOINT_INTERVAL;
    return { stateBlocks, checkpointBlocks, checkpointInterval };
  }

  execute(batch: StepBatch): Promise<StepResult> {
    return this.#enqueue(async (native) => {
      if (!this.#cacheAllocated) throw new BackendError('execute before allocateCache');
      try {
        return await native.execute(batch);
      } catch (cause) {
        throw new BackendError(`step failed: ${(cause as Error).message}`, { cause });
      }
    });
  }

  /**
   * Takes a step's logits back: they are detached (read as empty from now on)
   * and the next step writes into the same memory. See Backend.release.
   */
  release(result: StepResult): void {
    this.#queue.native?.releaseLogits(result.logits);
  }

  /** The native logits buffers: allocated so far, lent to JavaScript now. */
  get logitsBuffers(): { readonly allocated: number; readonly lent: number } | undefined {
    return this.#queue.native?.logitsBuffers;
  }

  /**
   * Weight bytes held in the model's own memory (`copied`), and used in place from the file's mapping
   * (`mapped`, see CpuBackendOptions.mmap); `hugePages`: the copies' arena got the transparent-huge-page advice;
   * `sextets`: bytes of 16-bit matrices kept in sextets (docs/cpu-backend.md). Undefined once closed.
   */
  get weightBytes(): { readonly copied: number; readonly mapped: number; readonly hugePages: boolean; readonly sextets: number } | undefined {
    return this.#queue.native?.weightBytes;
  }

  /** Waits for queued work, then frees native memory. Idempotent. */
  dispose(): Promise<void> {
    return this.#queue.dispose();
  }

  #enqueue<T>(work: (native: NativeCpuModel) => Promise<T>): Promise<T> {
    return this.#queue.enqueue(work);
  }
}

/** CpuBackend.load / loadGguf take a path and an options object; a wrong shape is told the call. */
function checkLoadArguments(name: string, path: unknown, options: unknown, call: string): void {
  if (typeof path !== 'string' || path.trim() === '') {
    const got = path === '' ? 'an empty string' : path !== null && typeof path === 'object' ? 'an object (the path comes first, the options second)' : String(path);
    throw new InvalidOptionError(name, `expected a path, got ${got}: ${call}`);
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidOptionError('options', `expected an object, got ${options === null ? 'null' : typeof options}: ${call}`);
  }
}
