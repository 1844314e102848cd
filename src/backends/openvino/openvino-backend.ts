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
import type { Backend, CacheConfig, KvPrecision, ModelShape, StepBatch, StepResult } from '../backend.js';
import { parseOpenVinoDevice, resolveOpenVinoDevice } from './device.js';
import { loadOpenVinoBinding, type NativeModelInfo, type NativeOvModel } from './native-binding.js';
import { isCacheInput, planStepInputs, type PortInfo, type StepInput } from './step-inputs.js';

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
  readonly #toInputs: (batch: StepBatch) => StepInput[];
  readonly #queue: NativeQueue<NativeOvModel>;
  #cacheAllocated = false;

  private constructor(native: NativeOvModel, info: NativeModelInfo, shape: ModelShape, kvPrecision: KvPrecision, version: string) {
    this.#queue = new NativeQueue(native, 'OpenVINO');
    this.shape = shape;
    this.device = info.device;
    this.kvPrecision = kvPrecision;
    this.converted = info.converted;
    this.cacheInputs = info.inputs.filter((p) => isCacheInput(p.name));
    this.openvinoVersion = version;
    this.#toInputs = planStepInputs(info.inputs);
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
    if (config.linearAttention !== undefined)
      throw new UnsupportedModelError(`${modelDir}: the OpenVINO backend does not run hybrid models (${config.architecture}) yet; the CPU backend does (docs/hybrid.md)`);
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
      if (keyCaches !== config.numLayers) {
        throw new ModelLoadError(`${xml} has ${keyCaches} key_cache inputs but config.json says ${config.numLayers} layers`, xml);
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
      try {
        await native.allocateCache(config.numBlocks);
      } catch (cause) {
        throw new BackendError(`allocating the KV cache (${config.numBlocks} blocks) failed: ${(cause as Error).message}`, { cause });
      }
      this.#cacheAllocated = true;
    });
  }

  execute(batch: StepBatch): Promise<StepResult> {
    return this.#enqueue(async (native) => {
      if (!this.#cacheAllocated) throw new BackendError('execute before allocateCache');
      let logits: Float32Array;
      try {
        logits = await native.execute(this.#toInputs(batch), batch.blockCopies);
      } catch (cause) {
        throw new BackendError(`OpenVINO step failed: ${(cause as Error).message}`, { cause });
      }
      if (logits.length !== batch.logitsIndices.length * this.shape.vocabSize) {
        throw new BackendError(`OpenVINO returned ${logits.length} logits for ${batch.logitsIndices.length} rows of ${this.shape.vocabSize}`);
      }
      return { logits };
    });
  }

  /** Waits for queued work, then frees native memory. Idempotent. */
  dispose(): Promise<void> {
    return this.#queue.dispose();
  }

  #enqueue<T>(work: (native: NativeOvModel) => Promise<T>): Promise<T> {
    return this.#queue.enqueue(work);
  }
}
