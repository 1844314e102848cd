/**
 * The Backend interface: the only thing the engine knows about a model runner.
 *
 * A step's batch follows OpenVINO's PagedAttention contract (the flattened
 * layout its PagedAttention operation takes), so the CPU backend and any user
 * backend consume exactly the same thing.
 * The engine owns block *numbers*; the backend owns the cache *memory* (layout,
 * precision). Backends never import the engine, and the engine never imports a
 * backend implementation.
 */

export type KvPrecision = 'f32' | 'f16' | 'u8';

/**
 * A per-request pool besides attention KV (hybrid / linear-attention models).
 * The engine sizes, allocates and frees these pools with attention KV; the CPU
 * backend declares one, "linear-state", for Qwen3.5 (docs/hybrid.md).
 */
export interface ExtraPoolSpec {
  /** Stable name, e.g. "linear-state" or "checkpoints". */
  readonly name: string;
  /**
   * Tokens covered by one block. A fixed per-request state (one block whatever
   * the length) uses `Infinity`.
   */
  readonly blockSize: number;
  /** Bytes one block occupies in backend memory. */
  readonly bytesPerBlock: number;
  /**
   * A pool of state snapshots that let a prefix hit resume a hybrid model:
   * block j of a request holds its linear-attention state after its first
   * (j + 1) * blockSize tokens, written by the step that computes them. Only
   * allocated with prefix caching on; the pipeline may set its blockSize
   * (kvCache.checkpointInterval, a multiple of the attention block size).
   */
  readonly checkpoints?: boolean;
}

/** What the engine needs to know about a model to size its cache and build batches. */
export interface ModelShape {
  readonly vocabSize: number;
  /** Layers that hold attention KV. */
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** Longest context (prompt + generated) the model supports. */
  readonly maxContextLength: number;
  /** Pools besides attention KV (see ExtraPoolSpec): the CPU backend's hybrid models have one. */
  readonly extraPools?: readonly ExtraPoolSpec[];
  /**
   * Tokens per attention KV block when the backend's cache layout fixes it (the
   * OpenVINO plugins choose it at compile time). The pipeline then uses it, and an
   * explicit different kvCache.blockSize is an error.
   */
  readonly kvBlockSize?: number;
  /**
   * Bytes one attention KV block takes in backend memory, when the backend knows
   * its layout (read back from the compiled model). Otherwise the engine computes
   * it from numLayers, numKvHeads, headDim and the precision.
   */
  readonly kvBlockBytes?: number;
  /**
   * Bytes of working memory one scheduled token costs the backend within a step
   * (activations, allocated per step). The pipeline caps a step's tokens so a
   * step never needs more than a quarter of physical memory: a small config
   * with a huge intermediate size must not ask for 16 GB per prefill.
   */
  readonly stepBytesPerToken?: number;
  /**
   * The KV cache precision this backend uses when the user sets none (the
   * CPU backend: f16). Absent: f32.
   */
  readonly defaultKvPrecision?: KvPrecision;
  /**
   * Width of the model's final hidden state, when the backend can return it
   * (StepBatch.hiddenIndices): what embeddings are pooled from. Absent: the
   * backend cannot embed.
   */
  readonly hiddenSize?: number;
  /**
   * The model attends both ways (a BERT-family encoder): a sequence's tokens
   * must all be computed in one step, from position 0, and it has no LM head.
   * The engine then never chunks a prompt, never takes a prefix-cache hit
   * for it and refuses one longer than a step's token budget (embedding.ts,
   * E3). Absent: causal.
   */
  readonly wholeSequences?: boolean;
  /**
   * Rows of the model's token-type table (BERT's type_vocab_size), when the
   * backend reads StepBatch.tokenTypeIds: each must be below it. Absent: the
   * backend takes no token types.
   */
  readonly tokenTypes?: number;
  /**
   * False where the backend cannot make StepBatch.blockCopies (the OpenVINO
   * backend with its cache on a device): n > 1 choices then compute their
   * prompt on their own instead of forking it (engine/parallel-sampling.ts,
   * P2). Absent: it can.
   */
  readonly copiesBlocks?: boolean;
}

/** The cache the engine asks the backend to allocate, once, before the first step. */
export interface CacheConfig {
  /** Attention KV blocks, including block 0 (the null block, never used for data). */
  readonly numBlocks: number;
  /** Tokens per attention KV block. */
  readonly blockSize: number;
  readonly precision: KvPrecision;
  /** Block counts of the extra pools, by name. */
  readonly extraPoolBlocks?: Readonly<Record<string, number>>;
  /** Tokens per block of the extra pools, by name (Infinity for a fixed state), as the pipeline settled them. */
  readonly extraPoolBlockSizes?: Readonly<Record<string, number>>;
}

/** One block table per sequence, flattened (same layout as the attention one). */
export interface BlockTables {
  readonly indices: Int32Array;
  /** B + 1 entries: sequence i's blocks are `indices[begins[i]]` up to (not including) `indices[begins[i + 1]]`. */
  readonly begins: Int32Array;
}

/**
 * One engine step. T = scheduled tokens, B = scheduled sequences.
 * Sequence i owns tokens subsequenceBegins[i] .. subsequenceBegins[i+1] of
 * inputIds/positions; it has pastLens[i] tokens already in its cache, and the
 * new tokens' K/V must be written at positions pastLens[i] ... (slot of
 * position p = block blockIndices[blockIndicesBegins[i] + floor(p / blockSize)],
 * offset p % blockSize).
 */
export interface StepBatch {
  /** [T] token ids, all sequences' scheduled tokens flattened. */
  readonly inputIds: Int32Array;
  /** [T] absolute positions. */
  readonly positions: Int32Array;
  /**
   * [T], optional, encoders only (ModelShape.wholeSequences): each token's
   * segment (BERT's token_type_ids: 1 on the second text of a pair). Absent:
   * all 0, as for one text.
   */
  readonly tokenTypeIds?: Int32Array;
  /** [B] tokens already cached per sequence. */
  readonly pastLens: Int32Array;
  /** [B + 1] start of each sequence's tokens in inputIds. */
  readonly subsequenceBegins: Int32Array;
  /** Attention KV block tables of all sequences, flattened. */
  readonly blockIndices: Int32Array;
  /** [B + 1] start of each sequence's blocks in blockIndices. */
  readonly blockIndicesBegins: Int32Array;
  /** max over sequences of pastLens[i] + its scheduled tokens. */
  readonly maxContextLen: number;
  /**
   * Ascending indices into the flattened tokens whose logits the engine needs
   * (the last token of each sequence that samples this step). The LM head runs
   * only for these.
   */
  readonly logitsIndices: Int32Array;
  /**
   * [logitsIndices.length], optional: nonzero for the rows whose argmax the
   * engine will take (greedy requests). A backend may return those in
   * StepResult.argmax, so the engine need not scan the row; it may also ignore this.
   */
  readonly argmaxRows?: Uint8Array;
  /**
   * Optional: the rows whose whole sampling chain the backend may run itself,
   * each with its request's parameters and state (see SamplingRows). A backend
   * that does answers in StepResult.sampled; one that ignores this leaves the
   * engine to sample those rows from the logits, as always.
   */
  readonly sampling?: SamplingRows;
  /**
   * Pairs (src, dst) of attention KV blocks to copy before the step
   * (copy-on-write after KvCacheManager.fork), made before the step computes
   * or writes anything. Set by n > 1 sampling (engine/parallel-sampling.ts) in
   * the step after a prompt's partial tail block was forked. Both weft backends
   * make them (native/src/cpu/model/kv_cache.cc, native/openvino/src/runner.cc).
   */
  readonly blockCopies?: Int32Array;
  /** Block tables of the extra pools, by pool name (hybrid models). */
  readonly extraBlockTables?: Readonly<Record<string, BlockTables>>;
  /**
   * [B], hybrid models with a checkpoints pool: nonzero where the sequence's
   * state slot is new and its pastLen tokens are a prefix hit, so the backend
   * first loads the slot from the sequence's checkpoint at pastLen (its
   * checkpoints-pool block pastLen / blockSize - 1). Where zero, a sequence
   * continues its slot's state (or starts from zero state at pastLen 0).
   */
  readonly stateFromCheckpoint?: Uint8Array;
  /**
   * Indices into the flattened tokens whose final hidden state (after the
   * model's final norm, before the LM head) the engine needs: embedding
   * requests' pooled tokens. Only sent to a backend whose shape has hiddenSize.
   */
  readonly hiddenIndices?: Int32Array;
}

export interface StepResult {
  /** [logitsIndices.length * vocabSize] row-major logits, float32. */
  readonly logits: Float32Array;
  /**
   * [logitsIndices.length], optional: for each row StepBatch.argmaxRows asked
   * for, the index of its first largest value, as src/sampling/sampler.ts's
   * `argmax` picks it (NaNs passed over, unless the row starts with one: then 0);
   * -1 for the other rows.
   */
  readonly argmax?: Int32Array;
  /** Optional: the answer to StepBatch.sampling (see SampledRows). */
  readonly sampled?: SampledRows;
  /** [hiddenIndices.length * hiddenSize] row-major, float32: present when StepBatch.hiddenIndices was. */
  readonly hidden?: Float32Array;
}

/**
 * The per-row parameters in SamplingRows.params, SAMPLING_PARAMS doubles a row, in this order:
 * temperature, topK, topP, minP, repetitionPenalty, presencePenalty,
 * frequencyPenalty, logprobs, logFloor (`Math.max(Math.log(1e-10), minP > 0 ?
 * Math.log(minP) : -Infinity)`, the candidates' floor as the JS sampler computes
 * it) and random (the request's next Rng value, in [0, 1)).
 */
export const SAMPLING_PARAMS = 10;

/**
 * StepBatch.sampling: what a backend needs to run src/sampling/sampler.ts's
 * chain (penalties, temperature, top-k, top-p, min-p, the seeded draw,
 * logprobs) on a row itself, with the same result. R = logitsIndices.length.
 */
export interface SamplingRows {
  /** [R]: nonzero for the rows to sample. */
  readonly rows: Uint8Array;
  /** [R * SAMPLING_PARAMS]: each row's parameters (see SAMPLING_PARAMS). */
  readonly params: Float64Array;
  /** The tokens the repetition penalty applies to (prompt and output), each once a row; row r's are seen[seenBegins[r]] up to seen[seenBegins[r + 1]]. */
  readonly seen: Int32Array;
  readonly seenBegins: Int32Array;
  /** The generated tokens (presence / frequency penalties), each once a row, and how often each was generated; laid out as `seen`. */
  readonly counted: Int32Array;
  readonly counts: Int32Array;
  readonly countedBegins: Int32Array;
  /**
   * Optional, guided rows: masks[r] is row r's grammar mask (bit t set iff token t is
   * allowed, (vocab + 31) / 32 words) or null. The engine fills these while the
   * step runs, then stores 1 in masksReady[0] (Atomics.store): a backend reads
   * them only after that, applies each after its NaN / infinity check (refused
   * tokens become -Infinity, and stay so in the logits it returns), and samples
   * the masked row. A backend that cannot wait leaves those rows unsampled.
   */
  readonly masks?: readonly (Uint32Array | null)[];
  /** [1], on a SharedArrayBuffer: 0 until the masks are filled. */
  readonly masksReady?: Int32Array;
}

/** StepResult.sampled: per row of the step (R = logitsIndices.length). */
export interface SampledRows {
  /** [R]: the chosen token; -1 for rows not sampled, or refused. */
  readonly tokens: Int32Array;
  /**
   * [R]: bit 1 the row was sampled, bit 2 its random number was used (the
   * request's Rng advances by one), bit 4 the row was refused because it holds
   * NaN or an infinity (the request fails, as with the JS sampler).
   */
  readonly flags: Uint8Array;
  /** [R * 2]: for rows with logprobs, the raw row's max and its sum of exp(value - max) in index order: logSumExp = max + Math.log(sum). */
  readonly stats: Float64Array;
  /** [R * topWidth]: each row's top-logprob tokens, best first, -1 padded. */
  readonly top: Int32Array;
  readonly topWidth: number;
}

export interface Backend {
  readonly shape: ModelShape;
  /** Allocates the cache memory. Called once, before the first execute. */
  allocateCache(config: CacheConfig): Promise<void> | void;
  /**
   * Runs one step off the main thread. Rejects (never throws synchronously, never
   * exits the process) on bad input; the engine fails that step's requests.
   */
  execute(batch: StepBatch): Promise<StepResult>;
  /**
   * Optional: the engine is done with a step's result (it has sampled every
   * row). The backend may take the memory back for a later step (the CPU
   * backend detaches the logits, which then read as empty), so nothing reads
   * the result afterwards. A backend without it leaves results to the
   * garbage collector.
   */
  release?(result: StepResult): void;
  /** Frees native memory. Idempotent. */
  dispose(): Promise<void> | void;
}

/** Reported while a backend loads a model. */
export interface LoadProgress {
  /** "config", "weights" or "done". */
  readonly phase: string;
  /** Bytes of weights read so far (0 in the config phase). */
  readonly loaded: number;
  /** Bytes of weights in all (0 in the config phase). */
  readonly total: number;
}
