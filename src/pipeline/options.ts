/**
 * Public option types and their validation. Every bad value, and every key
 * that is not an option, becomes an InvalidOptionError naming the option,
 * before anything is loaded, rendered or queued.
 */

import { checkEmbeddingOptions, type EmbeddingOptions } from '../embeddings/embedding-config.js';
import { checkRerankPipelineOptions, type RerankPipelineOptions } from '../embeddings/rerank-config.js';
import type { Backend, KvPrecision, LoadProgress } from '../backends/backend.js';
import { checkQuantization, type WeightQuantization } from '../backends/cpu/quantization.js';
import { DEFAULT_SPECULATIVE_ROWS, type SchedulingPolicy } from '../engine/scheduler.js';
import type { SpeculativeConfig } from '../engine/speculative.js';
import { InvalidOptionError } from '../errors.js';
import { reasoningParserNames } from '../parsers/registry.js';
import type { ResponseFormat, ToolChoice } from '../guided/guide.js';
import { NO_PARSER } from '../tool-formats/infer.js';
import { GUIDED_TOOL_PARSERS, isGuidedToolParser, toolParserNames } from '../tool-formats/registry.js';
import type { SamplingParams } from '../sampling/params.js';
import type { ChatTemplate } from '../text/chat-template.js';
import type { GenerationDefaults, Tokenizer, ToolDefinition } from '../text/types.js';
import { DEFAULT_TEXT_LIMITS, type TextSandboxLimits } from '../text/sandbox/text-sandbox.js';
import { toJsonData } from './json-data.js';
import { boolean, checkKeys, checkObject, integer, isObject, number, parseByteSize } from './option-values.js';

export type { LoadProgress };

export interface KvCacheOptions {
  /**
   * Byte budget for the cache: a number of bytes or a string such as "4GB" or "512MiB".
   * Default: enough for scheduler.maxNumSeqs requests at the model's full context, capped at a
   * quarter of the memory available once the weights are loaded (at least 64 MiB). See docs/engine.md.
   */
  size?: string | number;
  /** Element type of cached keys and values. Default: the backend's (the CPU backend: "f16"; others "f32"). */
  precision?: KvPrecision;
  /** Tokens per block. Default 16. */
  blockSize?: number;
  /**
   * Hybrid models (Qwen3.5) with prefix caching: tokens between two saved
   * linear-attention states, a multiple of blockSize. A prefix hit resumes at
   * the last saved state at or before it; each saved state costs a whole state's
   * memory. Default: the backend's (the CPU backend: 256). See docs/hybrid.md.
   */
  checkpointInterval?: number;
}

export interface SchedulerOptions {
  /** Most requests running at once. Default 64 (or maxNumBatchedTokens, if that is smaller). */
  maxNumSeqs?: number;
  /** Most tokens computed in one step (decodes + prompt chunks). Default 2048. */
  maxNumBatchedTokens?: number;
  /** Reuse cached blocks of identical prompt prefixes. Default true. */
  prefixCaching?: boolean;
  /** "fcfs" (default) or "priority" (higher `priority` first; the lowest is preempted first). */
  policy?: SchedulingPolicy;
  /**
   * Speculative decoding: a step verifies draft tokens only while its rows (one
   * per running request, plus the draft tokens) stay within this many; larger
   * batches decode without drafts, where verifying them costs more than it
   * saves. Default 8. See docs/speculative.md.
   */
  speculativeRows?: number;
}

/**
 * Speculative decoding (docs/speculative.md). Prompt lookup: up to `tokens`
 * draft tokens a step, copied from where the last `ngram` tokens occurred
 * before in the prompt or output, verified by the model in one step: by the
 * argmax for greedy requests, by the rejection rule for sampled ones (the
 * output is the one without it, token for token, for the same seed). Not with
 * responseFormat.
 */
export interface SpeculativeOptions {
  method: 'prompt-lookup';
  /** Most draft tokens verified per step (1-64). Default 4. */
  tokens?: number;
  /** Tokens matched to find a draft (1-32). Default 3. */
  ngram?: number;
}

export interface ParserOptions {
  /** Tool-call parser name (`toolParserNames()`), or "none". */
  tool?: string;
  /** Reasoning parser name (`reasoningParserNames()`), or "none". */
  reasoning?: string;
}

export interface PipelineOptions {
  /** Hugging Face model folder (config.json, safetensors, tokenizer.json), a .gguf file (docs/gguf.md), or an OpenVINO IR folder for an "openvino:*" device. */
  model?: string;
  /**
   * "cpu" (default): weft's native CPU backend on a Hugging Face folder.
   * "openvino:CPU" | "openvino:GPU" | "openvino:GPU.N" | "openvino:AUTO": the OpenVINO
   * backend on an OpenVINO IR folder (docs/openvino.md). "auto": OpenVINO (a GPU when it
   * reports one) for an IR folder, else "cpu".
   */
  device?: string;
  /** OpenVINO backend settings (ignored on "cpu"). */
  openvino?: OpenVinoOptions;
  /** CPU threads for the native backend. Default: available cores. */
  threads?: number;
  /**
   * Quantize the model's float (F32/F16/BF16) weight matrices at load: 'q8_0'
   * (8-bit, nearly lossless) or 'q4_0' (4-bit). Default: keep them as stored.
   * See docs/cpu-backend.md.
   */
  quantize?: WeightQuantization;
  /**
   * CPU backend: use weights kept as stored from a read-only mapping of the model file (the file
   * must not be rewritten in place while the pipeline runs); false reads them into memory, on huge
   * pages where the OS has them. Default: false on Linux with transparent huge pages (faster
   * decode), true elsewhere. See docs/cpu-backend.md#memory.
   */
  mmap?: boolean;
  /** A Backend implementation to use instead of loading `model`. Requires `tokenizer`. */
  backend?: Backend;
  /** Tokenizer to use with a custom `backend`. */
  tokenizer?: Tokenizer;
  /** Chat template to use with a custom `backend` (needed for chat()). */
  chatTemplate?: ChatTemplate;
  /** Generation defaults to use with a custom `backend`. */
  generationDefaults?: GenerationDefaults;
  kvCache?: KvCacheOptions;
  scheduler?: SchedulerOptions;
  /**
   * Default parsers for chat() and stream() of messages. Without this option they are inferred
   * from the model: the tool-call format its chat template writes, and "qwen3" for a model with a
   * <think> token or template (src/tool-formats/infer.ts). Given, it is used as it is.
   */
  parsers?: ParserOptions;
  /**
   * Default of chats' `guidedTools`: with toolChoice "auto", the calls the model chooses to make are
   * guided (their syntax and arguments). Default false. See docs/guided.md.
   */
  guidedTools?: boolean;
  /** Called while the model loads. */
  onProgress?: (progress: LoadProgress) => void;
  /** Receives the engine's log lines (a request failed, a step failed). Default: none. */
  logger?: (message: string) => void;
  /**
   * Default speculative decoding of greedy and sampled requests (docs/speculative.md); guided
   * requests (responseFormat, guided tool calls) run without it. Refused for hybrid (linear-attention) models.
   */
  speculative?: SpeculativeOptions;
  /** Bounds on the model folder's chat template and tokenizer, which run in a sandbox process (docs/security.md). */
  textSandbox?: TextSandboxOptions;
  /**
   * "process": run the engine and its native backend in a child process, so
   * that a crash there fails only the requests in flight (BackendCrashedError)
   * and a new child serves the next ones (docs/pipeline.md). Default "none".
   */
  isolation?: 'none' | 'process';
  /**
   * How embed() pools and normalises, over what the model folder's
   * sentence-transformers files say (docs/embeddings.md).
   */
  embedding?: EmbeddingOptions;
  /**
   * Marks a causal LM as a yes/no reranker for rerank() (a folder named
   * "*Reranker*" needs no marking), with its default instruction (docs/reranking.md).
   */
  rerank?: RerankPipelineOptions;
}

export interface TextSandboxOptions {
  /** Most milliseconds one template rendering or prompt encoding may take. Default 10000. */
  timeoutMs?: number;
  /** The worker's heap limit in MB. Default 512. */
  maxHeapMb?: number;
}

export interface OpenVinoOptions {
  /** INFERENCE_PRECISION_HINT. Default: the plugin's (bf16 on CPUs with AMX / AVX512-BF16, f16 on GPU). */
  inferencePrecision?: 'f32' | 'f16' | 'bf16';
  /** Further OpenVINO compile properties, passed as they are. */
  properties?: Record<string, string>;
}

export interface GenerateOptions {
  /** Most tokens to generate. Default: generation_config.json's max_new_tokens, else until EOS or the end of the model's context. */
  maxTokens?: number;
  /** 0 = greedy. Default from generation_config.json (greedy if it does not sample). */
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  repetitionPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Same seed, same output, alone or batched. Default: random. */
  seed?: number;
  /** Stop strings; the matched string is not part of the output. */
  stop?: string | string[];
  stopTokenIds?: number[];
  /** Generate exactly maxTokens, ignoring EOS. */
  ignoreEos?: boolean;
  /** Higher runs first under the "priority" policy. Default 0. */
  priority?: number;
  /** Top-n log probabilities per generated token (0-20). */
  logprobs?: number;
  signal?: AbortSignal;
  /** Leave special tokens out of the text. Default true, or false when a tool parser reads the reply. */
  skipSpecialTokens?: boolean;
  /** Parsers for this request (overrides the pipeline's). */
  parsers?: ParserOptions;
  /**
   * Constrain the output to JSON: `{ type: 'json_schema', schema }` (valid against the schema) or
   * `{ type: 'json_object' }` (any object). See docs/guided.md for the schema keywords supported.
   */
  responseFormat?: ResponseFormat;
  /**
   * Speculative decoding for this request (docs/speculative.md), or false for none; default: the
   * pipeline's. Greedy or sampled (the rejection rule); refused with responseFormat.
   */
  speculative?: SpeculativeOptions | false;
  /**
   * Choices to generate for this one prompt (1 to MAX_CHOICES, default 1; docs/parallel-sampling.md).
   * The prompt is computed once and shared; choice i samples with seed + i. With n > 1 the result
   * also holds `choices`, and stream() parts carry their `choice` index.
   */
  n?: number;
}

export interface ChatOptions extends GenerateOptions {
  /** Tools the chat template offers the model (OpenAI / Hugging Face shape). */
  tools?: ToolDefinition[];
  /** Extra chat template variables, e.g. { enable_thinking: false }. */
  templateKwargs?: Record<string, unknown>;
  /**
   * With `tools` and a tool parser: "auto" (default, the model decides), "none" (the model cannot
   * start a call), "required" (it must call one of the tools) or `{ name }` (it must call that one),
   * with arguments valid against the tool's schema. See docs/guided.md.
   */
  toolChoice?: ToolChoice;
  /**
   * Tool-guided "auto" (OVMS's enable_tool_guided_generation): free text until the model writes the
   * tool parser's call trigger, then the call in the parser's syntax to one of `tools` with arguments
   * valid against its schema, then free text again. Default: the pipeline's `guidedTools` (false).
   */
  guidedTools?: boolean;
  /**
   * Whether a guided reply ("required", a named tool, guidedTools) may make more than one call,
   * where the format allows it. Default true, as OpenAI's parallel_tool_calls.
   */
  parallelToolCalls?: boolean;
}

/**
 * Every key of an options type, checked by the compiler: adding an option to
 * the interface without listing it here (or listing one it lacks) fails to build.
 */
function keysOf<T>(keys: Record<keyof Required<T>, true>): readonly string[] {
  return Object.keys(keys);
}

const PIPELINE_KEYS = keysOf<PipelineOptions>({
  model: true,
  embedding: true,
  rerank: true,
  device: true,
  threads: true,
  quantize: true,
  mmap: true,
  backend: true,
  tokenizer: true,
  chatTemplate: true,
  generationDefaults: true,
  kvCache: true,
  scheduler: true,
  parsers: true,
  guidedTools: true,
  onProgress: true,
  logger: true,
  textSandbox: true,
  isolation: true,
  openvino: true,
  speculative: true,
});
const SPECULATIVE_KEYS = keysOf<SpeculativeOptions>({ method: true, tokens: true, ngram: true });
const TEXT_SANDBOX_KEYS = keysOf<TextSandboxOptions>({ timeoutMs: true, maxHeapMb: true });
const OPENVINO_KEYS = keysOf<OpenVinoOptions>({ inferencePrecision: true, properties: true });
const KV_CACHE_KEYS = keysOf<KvCacheOptions>({ size: true, precision: true, blockSize: true, checkpointInterval: true });
const SCHEDULER_KEYS = keysOf<SchedulerOptions>({ maxNumSeqs: true, maxNumBatchedTokens: true, prefixCaching: true, policy: true, speculativeRows: true });
const PARSER_KEYS = keysOf<ParserOptions>({ tool: true, reasoning: true });
const GENERATE_KEYS = keysOf<GenerateOptions>({
  maxTokens: true,
  temperature: true,
  topK: true,
  topP: true,
  minP: true,
  repetitionPenalty: true,
  presencePenalty: true,
  frequencyPenalty: true,
  seed: true,
  stop: true,
  stopTokenIds: true,
  ignoreEos: true,
  priority: true,
  logprobs: true,
  signal: true,
  skipSpecialTokens: true,
  parsers: true,
  responseFormat: true,
  speculative: true,
  n: true,
});
const CHAT_KEYS = keysOf<ChatOptions>({ ...Object.fromEntries(GENERATE_KEYS.map((key) => [key, true])), tools: true, templateKwargs: true, toolChoice: true, guidedTools: true, parallelToolCalls: true } as Record<keyof Required<ChatOptions>, true>);

export interface ResolvedPipelineOptions {
  /** undefined: the default rule (defaultKvBytes), applied once the backend is loaded. */
  readonly kvBytes: number | undefined;
  /** undefined: the backend's default (ModelShape.defaultKvPrecision, else f32). */
  readonly precision: KvPrecision | undefined;
  readonly blockSize: number;
  /** undefined: the backend's checkpoints pool block size. */
  readonly checkpointInterval: number | undefined;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly prefixCaching: boolean;
  readonly policy: SchedulingPolicy;
  readonly speculativeRows: number;
  readonly threads: number | undefined;
  readonly quantize: WeightQuantization | undefined;
  readonly mmap: boolean | undefined;
  readonly textLimits: TextSandboxLimits;
  readonly guidedTools: boolean;
  /** undefined: no speculative decoding by default. */
  readonly speculative: SpeculativeConfig | undefined;
}

export function resolvePipelineOptions(options: PipelineOptions): ResolvedPipelineOptions {
  if (!isObject(options as unknown)) {
    const got = typeof options === 'string' ? `the string ${JSON.stringify(options)}` : options === null ? 'null' : typeof options;
    const hint = typeof options === 'string' ? `Pipeline.create({ model: ${JSON.stringify(options)} })` : "Pipeline.create({ model: 'path/to/model' }), Pipeline.create({ backend }) or Pipeline.create({ remote: { baseURL, model } })";
    throw new InvalidOptionError('options', `expected an object, got ${got}: call ${hint}`);
  }
  checkKeys(undefined, options as Record<string, unknown>, PIPELINE_KEYS);
  for (const name of ['kvCache', 'scheduler', 'parsers', 'textSandbox'] as const) checkObject(name, options[name]);
  for (const name of ['onProgress', 'logger'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new InvalidOptionError(name, 'expected a function');
  }
  checkParsers('parsers', options.parsers);
  checkEmbeddingOptions(options.embedding);
  checkRerankPipelineOptions(options.rerank);
  if (options.guidedTools === true && options.parsers?.tool !== undefined && options.parsers.tool !== NO_PARSER && !isGuidedToolParser(options.parsers.tool)) {
    throw new InvalidOptionError('guidedTools', `the ${options.parsers.tool} tool parser has no guided grammar yet (guided: ${GUIDED_TOOL_PARSERS.join(', ')})`);
  }
  if (options.backend === undefined && (typeof options.model !== 'string' || options.model.trim() === '')) {
    throw new InvalidOptionError('model', `give a model folder path, or a backend and a tokenizer (got ${JSON.stringify(options.model) ?? 'undefined'})`);
  }
  if (options.backend !== undefined && options.tokenizer === undefined) {
    throw new InvalidOptionError('tokenizer', 'a custom backend needs a tokenizer');
  }
  if (options.isolation !== undefined && options.isolation !== 'none' && options.isolation !== 'process') {
    throw new InvalidOptionError('isolation', `expected "none" or "process", got ${JSON.stringify(options.isolation)}`);
  }
  if (options.isolation === 'process' && options.backend !== undefined) {
    throw new InvalidOptionError('isolation', 'a custom backend runs in this process; "process" isolation needs a model folder');
  }
  if (
    options.device !== undefined &&
    (typeof options.device !== 'string' || !['cpu', 'auto'].includes(options.device.toLowerCase()) && !options.device.toLowerCase().startsWith('openvino'))
  ) {
    throw new InvalidOptionError('device', `"${String(options.device)}" is not a device; use "cpu", "auto" or "openvino:CPU" | "openvino:GPU" | "openvino:AUTO"`);
  }
  const kv: KvCacheOptions = options.kvCache ?? {};
  checkKeys('kvCache', kv as Record<string, unknown>, KV_CACHE_KEYS);
  checkObject('openvino', options.openvino);
  if (options.openvino !== undefined) checkKeys('openvino', options.openvino as Record<string, unknown>, OPENVINO_KEYS);
  const kvBytes = kv.size === undefined ? undefined : parseByteSize(kv.size);
  if (kv.size !== undefined && kvBytes === undefined) throw new InvalidOptionError('kvCache.size', `expected bytes or a size like "4GB", got ${JSON.stringify(kv.size)}`);
  const precision = kv.precision;
  if (precision !== undefined && !['f32', 'f16', 'u8'].includes(precision)) throw new InvalidOptionError('kvCache.precision', `expected "f32", "f16" or "u8", got ${JSON.stringify(precision)}`);
  const scheduler: SchedulerOptions = options.scheduler ?? {};
  checkKeys('scheduler', scheduler as Record<string, unknown>, SCHEDULER_KEYS);
  const policy = scheduler.policy ?? 'fcfs';
  if (policy !== 'fcfs' && policy !== 'priority') throw new InvalidOptionError('scheduler.policy', `expected "fcfs" or "priority", got ${JSON.stringify(policy)}`);
  const prefixCaching = boolean('scheduler.prefixCaching', scheduler.prefixCaching) ?? true;
  const maxNumBatchedTokens = integer('scheduler.maxNumBatchedTokens', scheduler.maxNumBatchedTokens, 2048, { min: 1, max: 1 << 24 });
  const maxNumSeqs = integer('scheduler.maxNumSeqs', scheduler.maxNumSeqs, Math.min(64, maxNumBatchedTokens), { min: 1, max: 65536 });
  // Every running request must be able to decode in every step, or the later ones starve.
  if (maxNumSeqs > maxNumBatchedTokens) {
    throw new InvalidOptionError('scheduler.maxNumBatchedTokens', `${maxNumBatchedTokens} is below scheduler.maxNumSeqs (${maxNumSeqs}): each running request needs a token per step`);
  }
  return {
    kvBytes,
    precision,
    blockSize: integer('kvCache.blockSize', kv.blockSize, 16, { min: 1, max: 4096 }),
    checkpointInterval: kv.checkpointInterval === undefined ? undefined : integer('kvCache.checkpointInterval', kv.checkpointInterval, 256, { min: 1, max: 1 << 20 }),
    maxNumSeqs,
    maxNumBatchedTokens,
    prefixCaching,
    policy,
    speculativeRows: integer('scheduler.speculativeRows', scheduler.speculativeRows, DEFAULT_SPECULATIVE_ROWS, { min: 1, max: 1 << 24 }),
    threads: options.threads === undefined ? undefined : integer('threads', options.threads, 1, { min: 1, max: 1024 }),
    quantize: checkQuantization(options.quantize),
    mmap: boolean('mmap', options.mmap),
    textLimits: resolveTextLimits(options.textSandbox ?? {}),
    guidedTools: boolean('guidedTools', options.guidedTools) ?? false,
    speculative: checkSpeculative('speculative', options.speculative),
  };
}

/** A `speculative` option, validated (keys, method, ranges), with its defaults. */
function checkSpeculative(option: string, value: unknown): SpeculativeConfig | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new InvalidOptionError(option, `expected { method: 'prompt-lookup', tokens?, ngram? }, got ${JSON.stringify(value) ?? typeof value}`);
  checkKeys(option, value, SPECULATIVE_KEYS);
  if (value.method !== 'prompt-lookup') {
    throw new InvalidOptionError(`${option}.method`, `expected "prompt-lookup" (the only method so far), got ${JSON.stringify(value.method)}`);
  }
  return {
    method: 'prompt-lookup',
    tokens: integer(`${option}.tokens`, value.tokens, 4, { min: 1, max: 64 }),
    ngram: integer(`${option}.ngram`, value.ngram, 3, { min: 1, max: 32 }),
  };
}

function resolveTextLimits(sandbox: TextSandboxOptions): TextSandboxLimits {
  checkKeys('textSandbox', sandbox as Record<string, unknown>, TEXT_SANDBOX_KEYS);
  return {
    timeoutMs: integer('textSandbox.timeoutMs', sandbox.timeoutMs, DEFAULT_TEXT_LIMITS.timeoutMs, { min: 1, max: 3_600_000 }),
    maxHeapMb: integer('textSandbox.maxHeapMb', sandbox.maxHeapMb, DEFAULT_TEXT_LIMITS.maxHeapMb, { min: 16, max: 65_536 }),
  };
}

export interface ResolvedRequestOptions {
  readonly sampling: SamplingParams;
  /** Undefined: until EOS or the end of the context (see run-request.ts). */
  readonly maxTokens: number | undefined;
  readonly stopStrings: string[];
  readonly stopTokenIds: number[];
  readonly ignoreEos: boolean;
  readonly priority: number;
  /** Undefined: the pipeline decides (kept when a tool parser reads the reply). */
  readonly skipSpecialTokens: boolean | undefined;
  /** A chat's tools and template kwargs as plain JSON data (json-data.ts): what the template and parsers see. */
  readonly tools: ToolDefinition[] | undefined;
  readonly templateKwargs: Record<string, unknown> | undefined;
  readonly responseFormat: ResponseFormat | undefined;
  /** Undefined: "auto". */
  readonly toolChoice: ToolChoice | undefined;
  /** Undefined: the pipeline's default. */
  readonly guidedTools: boolean | undefined;
  /** Undefined: true. */
  readonly parallelToolCalls: boolean | undefined;
  /** Undefined: the pipeline's default; false: none for this request. */
  readonly speculative: SpeculativeConfig | false | undefined;
  /** Choices of this prompt (parallel sampling); 1 for one. */
  readonly n: number;
}

/** Most choices one request may ask for (`n`): each is a sequence of its own in the batch and the cache. */
export const MAX_CHOICES = 64;

/**
 * Validates one request's options. `chat`: the request is a chat, which alone
 * takes `tools` and `templateKwargs`. Defaults come from generation_config.json.
 */
export function resolveRequestOptions(options: ChatOptions, defaults: GenerationDefaults, chat: boolean): ResolvedRequestOptions {
  if (!isObject(options as unknown)) throw new InvalidOptionError('options', 'expected an object');
  if (!chat) {
    for (const key of ['tools', 'templateKwargs', 'toolChoice', 'guidedTools', 'parallelToolCalls'] as const) {
      if (key in options) throw new InvalidOptionError(key, 'only a chat takes it: pass an array of messages to chat() or stream()');
    }
  }
  checkKeys(undefined, options as Record<string, unknown>, chat ? CHAT_KEYS : GENERATE_KEYS);
  checkObject('parsers', options.parsers);
  checkParsers('parsers', options.parsers);
  checkTools(options.tools);
  checkObject('templateKwargs', options.templateKwargs);
  const tools = options.tools === undefined ? undefined : (toJsonData(options.tools, 'tools') as ToolDefinition[]);
  const templateKwargs = options.templateKwargs === undefined ? undefined : (toJsonData(options.templateKwargs, 'templateKwargs') as Record<string, unknown>);
  const sampleByDefault = defaults.doSample === true;
  const temperature = number('temperature', options.temperature, sampleByDefault ? (defaults.temperature ?? 1) : 0, { min: 0, max: 100 });
  const stop = options.stop === undefined ? [] : typeof options.stop === 'string' ? [options.stop] : options.stop;
  if (!Array.isArray(stop) || stop.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new InvalidOptionError('stop', 'expected a non-empty string or an array of them');
  }
  const stopTokenIds = options.stopTokenIds ?? [];
  if (!Array.isArray(stopTokenIds) || stopTokenIds.some((id) => !Number.isInteger(id) || id < 0)) {
    throw new InvalidOptionError('stopTokenIds', 'expected an array of token ids');
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new InvalidOptionError('signal', 'expected an AbortSignal');
  const speculative = options.speculative === false ? false : checkSpeculative('speculative', options.speculative);
  const sampling: SamplingParams = {
    temperature,
    topK: integer('topK', options.topK, sampleByDefault ? (defaults.topK ?? 0) : 0, { min: 0, max: 1 << 30 }),
    topP: number('topP', options.topP, sampleByDefault ? (defaults.topP ?? 1) : 1, { min: 0, minExclusive: true, max: 1 }),
    minP: number('minP', options.minP, sampleByDefault ? (defaults.minP ?? 0) : 0, { min: 0, max: 1 }),
    repetitionPenalty: number('repetitionPenalty', options.repetitionPenalty, defaults.repetitionPenalty ?? 1, { min: 0, minExclusive: true, max: 100 }),
    presencePenalty: number('presencePenalty', options.presencePenalty, 0, { min: -100, max: 100 }),
    frequencyPenalty: number('frequencyPenalty', options.frequencyPenalty, 0, { min: -100, max: 100 }),
    seed: integer('seed', options.seed, Math.floor(Math.random() * 2 ** 32), { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    logprobs: integer('logprobs', options.logprobs, 0, { min: 0, max: 20 }),
  };
  if (speculative !== false && speculative !== undefined && options.responseFormat !== undefined) {
    // A guided request's mask is filled for one row a step, while the step runs; verifying a draft
    // would need the mask of each row after the draft tokens before it (docs/speculative.md).
    throw new InvalidOptionError('speculative', 'is not applied to guided output: responseFormat constrains every token with a grammar, whose mask weft fills for one row a step, not for each verified draft row; leave speculative out (or false) for this request');
  }
  const n = integer('n', options.n, 1, { min: 1, max: MAX_CHOICES });
  // Choice i samples with seed + i, which must stay an exact integer.
  if (sampling.seed > Number.MAX_SAFE_INTEGER - (n - 1)) throw new InvalidOptionError('seed', `with n = ${n}, the seeds seed .. seed + ${n - 1} must stay at most ${Number.MAX_SAFE_INTEGER}: pick a smaller seed`);
  return {
    sampling,
    speculative,
    n,
    maxTokens: options.maxTokens === undefined ? defaults.maxNewTokens : integer('maxTokens', options.maxTokens, 1, { min: 1, max: 1 << 30 }),
    // Copies: a caller changing its arrays mid-request must not change the request.
    stopStrings: [...stop],
    stopTokenIds: [...stopTokenIds],
    ignoreEos: boolean('ignoreEos', options.ignoreEos) ?? false,
    priority: number('priority', options.priority, 0, { min: -Infinity, max: Infinity }),
    skipSpecialTokens: boolean('skipSpecialTokens', options.skipSpecialTokens),
    tools,
    templateKwargs,
    responseFormat: checkResponseFormat(options.responseFormat),
    toolChoice: checkToolChoice(options.toolChoice, options.tools, options.responseFormat),
    guidedTools: checkGuidedTools(options.guidedTools, options.responseFormat),
    parallelToolCalls: boolean('parallelToolCalls', options.parallelToolCalls),
  };
}

const JSON_SCHEMA_FORMAT_KEYS = ['type', 'schema', 'name'];

function checkResponseFormat(format: unknown): ResponseFormat | undefined {
  if (format === undefined) return undefined;
  if (!isObject(format)) throw new InvalidOptionError('responseFormat', 'expected { type: "json_schema", schema } or { type: "json_object" }');
  if (format.type === 'json_object') {
    checkKeys('responseFormat', format, ['type']);
    return { type: 'json_object' };
  }
  if (format.type !== 'json_schema') throw new InvalidOptionError('responseFormat.type', `expected "json_schema" or "json_object", got ${JSON.stringify(format.type)}`);
  checkKeys('responseFormat', format, JSON_SCHEMA_FORMAT_KEYS);
  if (!isObject(format.schema) && typeof format.schema !== 'boolean') throw new InvalidOptionError('responseFormat.schema', 'expected a JSON schema object');
  if (format.name !== undefined && typeof format.name !== 'string') throw new InvalidOptionError('responseFormat.name', 'expected a string');
  // Plain JSON data, copied: a caller changing its schema mid-request must not change the request.
  return { type: 'json_schema', schema: toJsonData(format.schema, 'responseFormat.schema'), ...(format.name !== undefined && { name: format.name }) };
}

function checkToolChoice(choice: unknown, tools: unknown, responseFormat: unknown): ToolChoice | undefined {
  if (choice === undefined || choice === 'auto') return undefined;
  if (choice === 'none' || choice === 'required') {
    if (choice === 'required' && (!Array.isArray(tools) || tools.length === 0)) throw new InvalidOptionError('toolChoice', '"required" needs tools');
  } else {
    if (!isObject(choice) || typeof choice.name !== 'string') throw new InvalidOptionError('toolChoice', 'expected "auto", "none", "required" or { name }');
    checkKeys('toolChoice', choice, ['name']);
    const name = choice.name;
    if (!Array.isArray(tools) || !tools.some((tool: { function: { name: string } }) => tool.function.name === name)) {
      throw new InvalidOptionError('toolChoice.name', `no tool is named ${JSON.stringify(name)}`);
    }
  }
  if (responseFormat !== undefined && choice !== 'none') throw new InvalidOptionError('toolChoice', 'cannot force a tool call and a responseFormat at once');
  return typeof choice === 'string' ? choice : { name: choice.name as string };
}

function checkGuidedTools(value: unknown, responseFormat: unknown): boolean | undefined {
  const guided = boolean('guidedTools', value);
  if (guided === true && responseFormat !== undefined) throw new InvalidOptionError('guidedTools', 'cannot guide tool calls and a responseFormat at once');
  return guided;
}

/** Unknown parser names fail when the options are given, not at the first chat. */
function checkParsers(option: string, parsers: ParserOptions | undefined): void {
  if (parsers === undefined) return;
  checkKeys(option, parsers as Record<string, unknown>, PARSER_KEYS);
  if (parsers.tool !== undefined && parsers.tool !== NO_PARSER && !toolParserNames().includes(parsers.tool)) {
    throw new InvalidOptionError(`${option}.tool`, `unknown tool parser ${JSON.stringify(parsers.tool)} (known: ${toolParserNames().join(', ')})`);
  }
  if (parsers.reasoning !== undefined && parsers.reasoning !== NO_PARSER && !reasoningParserNames().includes(parsers.reasoning)) {
    throw new InvalidOptionError(
      `${option}.reasoning`,
      `unknown reasoning parser ${JSON.stringify(parsers.reasoning)} (known: ${reasoningParserNames().join(', ')})`,
    );
  }
}

/** Tools in the shape chat templates read: `{ type: 'function', function: { name, description?, parameters? } }`. */
function checkTools(tools: unknown): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) throw new InvalidOptionError('tools', 'expected an array of { type: "function", function: { name, ... } }');
  tools.forEach((tool: unknown, i) => {
    const fn = isObject(tool) ? tool.function : undefined;
    if (!isObject(tool) || tool.type !== 'function' || !isObject(fn) || typeof fn.name !== 'string' || fn.name === '') {
      throw new InvalidOptionError(`tools[${i}]`, 'expected { type: "function", function: { name, description?, parameters? } }');
    }
    if (fn.parameters !== undefined && !isObject(fn.parameters)) throw new InvalidOptionError(`tools[${i}].function.parameters`, 'expected a JSON schema object');
  });
}
