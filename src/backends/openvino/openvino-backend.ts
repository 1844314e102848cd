/**
 * The OpenVINO backend: weft's engine driving an OpenVINO-compiled PagedAttention
 * model (native/openvino), off the main thread.
 *
 * Load: read the IR, convert a stateful SDPA model with SDPAToPagedAttention (a
 * PagedAttention IR is used as is), add the logits-rows input, compile for the
 * device with the KV precision hint, then read the cache inputs' element types
 * and shapes back from the compiled model. The block size and bytes per block
 * come from there (never hard-coded: they differ by plugin, precision and version)
 * and are reported in `shape` for the engine's sizing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BackendError, InvalidOptionError, ModelLoadError, UnsupportedModelError } from '../../errors.js';
import { loadModelConfig } from '../../model-files/config.js';
import { NativeQueue } from '../native-queue.js';
import type { Backend, CacheConfig, ExtraPoolSpec, KvPrecision, ModelShape, StepBatch, StepResult } from '../backend.js';
import { parseOpenVinoDevice, resolveOpenVinoDevice } from './device.js';
import { loadOpenVinoBinding, type NativeModelInfo, type NativeOvModel } from './native-binding.js';
import {
  CHECKPOINT_POOL,
  isCacheInput,
  isStateInput,
  LINEAR_STATE_POOL,
  planStepInputs,
  type LinearLayout,
  type PortInfo,
  type StepInput,
} from './step-inputs.js';

/** Tokens per checkpoint unless kvCache.checkpointInterval says otherwise (as the CPU backend). */
export const DEFAULT_CHECKPOINT_INTERVAL = 256;

/**
 * A hybrid model's extra pools on OpenVINO: 'linear-state' (one state block per
 * running sequence) and 'checkpoints' (a state every interval tokens, with
 * prefix caching), both blocks of the compiled model's state tables, so one
 * block costs what all conv_state_table.N and gated_delta_state_table.N take per block.
 */
export function linearStatePools(stateBytesPerBlock: number): ExtraPoolSpec[] {
  return [
    { name: LINEAR_STATE_POOL, blockSize: Infinity, bytesPerBlock: stateBytesPerBlock },
    { name: CHECKPOINT_POOL, blockSize: DEFAULT_CHECKPOINT_INTERVAL, bytesPerBlock: stateBytesPerBlock, checkpoints: true },
  ];
}

export type InferencePrecision = 'f32' | 'f16' | 'bf16';

export interface OpenVinoBackendOptions {
  /** 'openvino:CPU' (default), 'openvino:GPU', 'openvino:GPU.N' or 'openvino:AUTO'. */
  readonly device?: string;
  /** KV cache precision hint (KV_CACHE_PRECISION), default 'f32'. */
  readonly kvPrecision?: KvPrecision;
  /**
   * INFERENCE_PRECISION_HINT; default: the plugin's own (bf16 on CPUs with AMX / AVX512-BF16,
   * f16 on GPU), except f32 on CPU with an f32 cache (the CPU plugin allows no other pairing).
   */
  readonly inferencePrecision?: InferencePrecision;
  /** INFERENCE_NUM_THREADS on CPU. */
  readonly threads?: number;
  /** Further compile properties, passed as they are (they win over the ones above). */
  readonly properties?: Readonly<Record<string, string>>;
}

const OV_PRECISION: Record<KvPrecision, string> = { f32: 'f32', f16: 'f16', u8: 'u8' };

/** The compile properties weft sets for `options` on `device`. Pure; exported for tests. */
export function compileProperties(device: string, options: OpenVinoBackendOptions): Record<string, string> {
  const kv = options.kvPrecision ?? 'f32';
  const properties: Record<string, string> = { KV_CACHE_PRECISION: OV_PRECISION[kv] };
  // An f32 cache needs f32 compute on the CPU plugin: under its bf16 default (CPUs with
  // AMX / AVX512-BF16) it refuses to compile ("expect kvcache type bf16"). So an f32
  // cache without an explicit inference precision asks for f32 compute too.
  const inference = options.inferencePrecision ?? (kv === 'f32' && device === 'CPU' ? 'f32' : undefined);
  if (inference !== undefined) properties.INFERENCE_PRECISION_HINT = inference;
  if (options.threads !== undefined && device === 'CPU') properties.INFERENCE_NUM_THREADS = String(options.threads);
  return { ...properties, ...options.properties };
}

/**
 * Tokens per block of the compiled cache: dimension 2 of value_cache.0. Both
 * plugins lay the value cache out as [blocks, kv_heads, block_size, head_size]
 * (the key cache differs: the GPU plugin transposes it, u8 adds scale/zero-point
 * rows), so the value cache is the one read.
 */
export function cacheBlockSize(inputs: readonly PortInfo[]): number {
  const value = inputs.find((p) => p.name === 'value_cache.0');
  const blockSize = value?.shape[2];
  if (value === undefined || value.shape.length !== 4 || blockSize === undefined || blockSize < 1) {
    throw new ModelLoadError(`the compiled model's value_cache.0 has shape [${value?.shape.join(', ') ?? ''}]; expected [blocks, heads, block_size, head_size]`);
  }
  return blockSize;
}

export class OpenVinoBackend implements Backend {
  readonly shape: ModelShape;
  /** The OpenVINO device the model runs on ("CPU", "GPU", ...). */
  readonly device: string;
  readonly kvPrecision: KvPrecision;
  /** The compiled cache inputs, as the plugin chose them. */
  readonly cacheInputs: readonly PortInfo[];
  /** True when the IR was converted from stateful SDPA at load. */
  readonly converted: boolean;
  readonly openvinoVersion: string;
  /** The compiled linear-attention state tables (hybrid models; empty otherwise). */
  readonly stateInputs: readonly PortInfo[];
  readonly #toInputs: (batch: StepBatch) => StepInput[];
  readonly #queue: NativeQueue<NativeOvModel>;
  #cacheAllocated = false;
  #linearLayout: LinearLayout | undefined;

  private constructor(native: NativeOvModel, info: NativeModelInfo, shape: ModelShape, kvPrecision: KvPrecision, version: string) {
    this.#queue = new NativeQueue(native, 'OpenVINO');
    this.shape = shape;
    this.device = info.device;
    this.kvPrecision = kvPrecision;
    this.converted = info.converted;
    this.cacheInputs = info.inputs.filter((p) => isCacheInput(p.name));
    this.stateInputs = info.inputs.filter((p) => isStateInput(p.name));
    this.openvinoVersion = version;
    this.#toInputs = planStepInputs(info.inputs, () => this.#linearLayout);
  }

  /** Loads an OpenVINO IR LLM folder (openvino_model.xml/.bin, config.json). */
  static async load(modelDir: string, options: OpenVinoBackendOptions = {}): Promise<OpenVinoBackend> {
    const call = "OpenVinoBackend.load('models/qwen3-ov', { device: 'GPU', kvPrecision, ... })";
    if (typeof modelDir !== 'string' || modelDir.trim() === '') {
      throw new InvalidOptionError('modelDir', `expected an OpenVINO IR folder path, got ${modelDir === '' ? 'an empty string' : modelDir !== null && typeof modelDir === 'object' ? 'an object (the path comes first, the options second)' : String(modelDir)}: ${call}`);
    }
    if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new InvalidOptionError('options', `expected an object, got ${options === null ? 'null' : typeof options}: ${call}`);
    const kvPrecision = options.kvPrecision ?? 'f32';
    if (!['f32', 'f16', 'u8'].includes(kvPrecision)) throw new InvalidOptionError('kvCache.precision', `expected f32, f16 or u8, got ${String(kvPrecision)}`);
    if (options.inferencePrecision !== undefined && !['f32', 'f16', 'bf16'].includes(options.inferencePrecision)) {
      throw new InvalidOptionError('openvino.inferencePrecision', `expected f32, f16 or bf16, got ${String(options.inferencePrecision)}`);
    }
    parseOpenVinoDevice(options.device ?? 'openvino:CPU'); // a bad name is an option error, OpenVINO or not
    const xml = join(modelDir, 'openvino_model.xml');
    for (const file of [xml, join(modelDir, 'openvino_model.bin')]) {
      if (!existsSync(file)) throw new ModelLoadError(`${file} is missing: not an OpenVINO IR folder (export one with optimum-intel or tools/openvino/make_ir.py)`, file);
    }
    const config = await loadModelConfig(modelDir);
    const linear = config.linearAttention;
    // Verified on OpenVINO: Qwen3.5's Gated DeltaNet layers with a dense MLP (docs/openvino.md, "Hybrid models").
    if (linear !== undefined && (linear.fusedProjections === true || config.mixtureOfExperts !== undefined))
      throw new UnsupportedModelError(`${modelDir}: the OpenVINO backend runs Qwen3.5 hybrids (dense, separate projections), not ${config.architecture} yet; the CPU backend does (docs/hybrid.md)`);
    const binding = loadOpenVinoBinding();
    let available: string[];
    try {
      available = binding.availableDevices();
    } catch (cause) {
      throw new BackendError(`OpenVINO could not list its devices: ${(cause as Error).message}`, { cause });
    }
    const device = resolveOpenVinoDevice(options.device ?? 'openvino:CPU', available);
    const native = new binding.OvModel();
    let info: NativeModelInfo;
    try {
      info = await native.load(xml, device, compileProperties(device, options));
    } catch (cause) {
      native.dispose();
      throw new ModelLoadError(`${xml}: OpenVINO could not load the model on ${device}: ${(cause as Error).message}`, xml, undefined, { cause });
    }
    try {
      const keyCaches = info.inputs.filter((p) => p.name.startsWith('key_cache.')).length;
      const attentionLayers = linear === undefined ? config.numLayers : linear.layers.filter((isLinear) => !isLinear).length;
      if (keyCaches !== attentionLayers) {
        throw new ModelLoadError(`${xml} has ${keyCaches} key_cache inputs but config.json says ${attentionLayers} ${linear === undefined ? '' : 'full-attention '}layers`, xml);
      }
      const linearLayers = linear === undefined ? 0 : linear.layers.filter(Boolean).length;
      for (const table of ['conv_state_table', 'gated_delta_state_table']) {
        const found = info.inputs.filter((p) => p.name.startsWith(`${table}.`)).length;
        if (found !== linearLayers) {
          throw new ModelLoadError(
            linear === undefined
              ? `${xml} has ${found} ${table} inputs (linear-attention state) but config.json describes no linear-attention layers`
              : `${xml} has ${found} ${table} inputs but config.json says ${linearLayers} linear-attention layers (was it made paged by an OpenVINO without the linear-attention fusions?)`,
            xml,
          );
        }
      }
      const logits = info.outputs.find((p) => p.name === 'logits');
      const vocab = logits?.shape[logits.shape.length - 1];
      if (vocab !== undefined && vocab !== -1 && vocab !== config.vocabSize) {
        throw new ModelLoadError(`${xml}: logits have ${vocab} columns but config.json says vocab_size ${config.vocabSize}`, xml);
      }
      const shape: ModelShape = {
        vocabSize: config.vocabSize,
        numLayers: config.numLayers,
        numKvHeads: config.numKvHeads,
        headDim: config.headDim,
        maxContextLength: config.maxPositionEmbeddings,
        kvBlockSize: cacheBlockSize(info.inputs),
        kvBlockBytes: info.bytesPerBlock,
        // The runner copies blocks of host caches only (runner.cc copy_blocks): a device cache gets no forks.
        ...(device.startsWith('GPU') && { copiesBlocks: false }),
        ...(linear !== undefined && { numLayers: attentionLayers, extraPools: linearStatePools(info.stateBytesPerBlock) }),
      };
      return new OpenVinoBackend(native, info, shape, kvPrecision, binding.openvinoVersion);
    } catch (error) {
      native.dispose();
      throw error;
    }
  }

  allocateCache(config: CacheConfig): Promise<void> {
    return this.#enqueue(async (native) => {
      if (config.blockSize !== this.shape.kvBlockSize) {
        throw new InvalidOptionError('kvCache.blockSize', `the ${this.device} plugin compiled this model with ${this.shape.kvBlockSize}-token blocks, not ${config.blockSize}`);
      }
      if (config.precision !== this.kvPrecision) {
        throw new InvalidOptionError('kvCache.precision', `the model was compiled for a ${this.kvPrecision} cache, not ${config.precision}`);
      }
      let stateBlocks = 0;
      let layout: LinearLayout | undefined;
      if (this.shape.extraPools !== undefined) {
        const slots = config.extraPoolBlocks?.[LINEAR_STATE_POOL];
        if (slots === undefined || slots < 2) {
          throw new BackendError(`a hybrid model needs the ${LINEAR_STATE_POOL} pool (CacheConfig.extraPoolBlocks, at least 2 blocks), got ${String(slots)}`);
        }
        const checkpoints = config.extraPoolBlocks?.[CHECKPOINT_POOL] ?? 0;
        const interval = checkpoints > 0 ? (config.extraPoolBlockSizes?.[CHECKPOINT_POOL] ?? DEFAULT_CHECKPOINT_INTERVAL) : 0;
        if (checkpoints > 0 && !(Number.isInteger(interval) && interval > 0)) {
          throw new BackendError(`the ${CHECKPOINT_POOL} pool needs a whole number of tokens per block, got ${interval}`);
        }
        stateBlocks = slots + checkpoints;
        layout = { stateBlocks: slots, checkpointInterval: interval };
      }
      try {
        await native.allocateCache(config.numBlocks, stateBlocks);
      } catch (cause) {
        throw new BackendError(`allocating the KV cache (${config.numBlocks} blocks${stateBlocks > 0 ? `, ${stateBlocks} state blocks` : ''}) failed: ${(cause as Error).message}`, { cause });
      }
      this.#linearLayout = layout;
      this.#cacheAllocated = true;
      if (layout === undefined) await this.#warmUp(native);
    });
  }

  /**
   * One 1-token step into the null block (block 0, which the engine never hands out: block-pool.ts
   * I1), so that the plugin's first-infer() cost is paid at load and not by the first request's time
   * to first token: on the CPU plugin, 0.6B shape, the first infer() took about 1.3 s more than the
   * same step later, whatever its shape (docs/openvino.md, "At real size"). Not for
   * hybrid models: their step would write a linear-attention state into state block 0, the zero
   * state every sequence starts from.
   */
  async #warmUp(native: NativeOvModel): Promise<void> {
    const one = Int32Array.of(0);
    const batch: StepBatch = {
      inputIds: one,
      positions: one,
      pastLens: one,
      subsequenceBegins: Int32Array.of(0, 1),
      blockIndices: one,
      blockIndicesBegins: Int32Array.of(0, 1),
      maxContextLen: 1,
      logitsIndices: one,
    };
    try {
      const { logits } = await native.execute(this.#toInputs(batch));
      native.releaseLogits(logits);
    } catch (cause) {
      throw new BackendError(`the warm-up step after allocating the KV cache failed: ${(cause as Error).message}`, { cause });
    }
  }

  execute(batch: StepBatch): Promise<StepResult> {
    return this.#enqueue(async (native) => {
      if (!this.#cacheAllocated) throw new BackendError('execute before allocateCache');
      let result: { logits: Float32Array; argmax?: Int32Array };
      try {
        // argmaxRows: the greedy rows are picked on the step's worker thread (greedy_pick.h), not scanned in JS.
        result = await native.execute(this.#toInputs(batch), batch.blockCopies, batch.argmaxRows);
      } catch (cause) {
        throw new BackendError(`OpenVINO step failed: ${(cause as Error).message}`, { cause });
      }
      if (result.logits.length !== batch.logitsIndices.length * this.shape.vocabSize) {
        native.releaseLogits(result.logits);
        throw new BackendError(`OpenVINO returned ${result.logits.length} logits for ${batch.logitsIndices.length} rows of ${this.shape.vocabSize}`);
      }
      return { logits: result.logits, ...(result.argmax !== undefined && { argmax: result.argmax }) };
    });
  }

  /**
   * Takes a step's logits back: they are detached (read as empty from now on) and the
   * next step writes into the same memory (as the CPU backend's, docs/performance.md). See Backend.release.
   */
  release(result: StepResult): void {
    this.#queue.native?.releaseLogits(result.logits);
  }

  /** The native logits buffers: allocated so far, lent to JavaScript now. */
  get logitsBuffers(): { readonly allocated: number; readonly lent: number } | undefined {
    return this.#queue.native?.logitsBuffers;
  }

  /** Waits for queued work, then frees native memory. Idempotent. */
  dispose(): Promise<void> {
    return this.#queue.dispose();
  }

  #enqueue<T>(work: (native: NativeOvModel) => Promise<T>): Promise<T> {
    return this.#queue.enqueue(work);
  }
}
