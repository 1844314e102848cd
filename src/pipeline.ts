/**
 * Pipeline: the public face of weft. create / generate / chat / stream / stats / close.
 *
 * Data flows one way: Pipeline -> engine -> backend -> engine -> Pipeline.
 * The pipeline turns text into token ids (tokenizer, chat template), hands
 * requests to the engine, and turns the engine's deltas back into results,
 * stream parts and typed errors.
 */

import { EventEmitter } from 'eventemitter3';
import type { Backend } from './backends/backend.js';
import { Engine, type FinishInfo, type RequestDelta, type StepInfo } from './engine/engine.js';
import { KvCacheManager, type PoolStats } from './engine/kv/kv-cache-manager.js';
import { planPools } from './engine/kv/sizing.js';
import type { FinishReason, RequestSpec } from './engine/request.js';
import {
  AbortError,
  BackendError,
  EngineError,
  InvalidOptionError,
  PipelineClosedError,
  PromptTooLongError,
  WeftError,
} from './errors.js';
import {
  resolvePipelineOptions,
  resolveRequestOptions,
  type ChatOptions,
  type GenerateOptions,
  type PipelineOptions,
  type ResolvedPipelineOptions,
  type ResolvedRequestOptions,
} from './options.js';
import { OutputParser, type ParsedOutput } from './output-parser.js';
import { createParserStream } from './parser-streams.js';
import { RequestChannel } from './request-channel.js';
import type { TokenLogprob } from './sampling/sampler.js';
import type { StreamPart, TokenLogprobs, Usage } from './stream-parts.js';
import { requireChatTemplate, type ChatTemplate } from './text/chat-template.js';
import type { ChatMessage, GenerationDefaults, Tokenizer, ToolCall } from './text/types.js';

export interface GenerateResult {
  readonly text: string;
  readonly tokenIds: number[];
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  /** Per generated token, when `logprobs` was asked for. */
  readonly logprobs?: TokenLogprobs[];
}

export interface ChatResult {
  /** The answer text without reasoning and tool-call markup (null if there is none). */
  readonly content: string | null;
  readonly reasoning: string | null;
  readonly toolCalls: ToolCall[];
  /** The raw generated text. */
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  /** What the parsers found malformed in the output. */
  readonly warnings: string[];
}

export interface PipelineStats {
  readonly kv: { readonly pools: PoolStats[]; readonly blockSize: number; readonly prefixCaching: boolean };
  readonly running: number;
  readonly waiting: number;
  readonly preemptions: number;
  readonly steps: number;
  readonly requests: { readonly started: number; readonly finished: number };
  readonly generatedTokens: number;
}

export interface PipelineEvents {
  /** After every engine step. */
  step: (info: StepInfo) => void;
  'request-start': (info: { requestId: number; promptTokens: number }) => void;
  'request-preempted': (info: { requestId: number }) => void;
  'request-finish': (info: { requestId: number; finishReason: FinishReason; usage: Usage }) => void;
  /** Engine log lines (a request or a step failed). */
  log: (message: string) => void;
}

interface ModelParts {
  readonly backend: Backend;
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
}

/** A request's text prompt after templating, with what the parsers need to know. */
interface PreparedPrompt {
  readonly promptTokenIds: number[];
  readonly promptText: string | undefined;
  readonly chat: boolean;
  readonly tools: ChatOptions['tools'];
}

export class Pipeline extends EventEmitter<PipelineEvents> implements AsyncDisposable {
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
  private readonly backend: Backend;
  private readonly engine: Engine;
  private readonly options: PipelineOptions;
  private closed = false;
  private closing: Promise<void> | undefined;
  private started = 0;
  private finished = 0;
  private generated = 0;

  private constructor(parts: ModelParts, options: PipelineOptions, resolved: ResolvedPipelineOptions, kv: KvCacheManager) {
    super();
    this.backend = parts.backend;
    this.tokenizer = parts.tokenizer;
    this.chatTemplate = parts.chatTemplate;
    this.generationDefaults = parts.generationDefaults;
    this.options = options;
    this.engine = new Engine({
      backend: parts.backend,
      kv,
      scheduler: { maxNumSeqs: resolved.maxNumSeqs, maxNumBatchedTokens: resolved.maxNumBatchedTokens, policy: resolved.policy },
      decoder: parts.tokenizer,
      eosTokenIds: [...new Set([...parts.tokenizer.eosTokenIds, ...(parts.generationDefaults.eosTokenIds ?? [])])],
      observer: {
        onStep: (info) => this.safeEmit('step', info),
        onPreempt: (requestId) => this.safeEmit('request-preempted', { requestId }),
        onLog: (message) => {
          this.safeEmit('log', message);
          options.logger?.(message); // the engine drops what a logger throws
        },
      },
    });
  }

  /** Loads a model folder (or wraps a custom backend) and starts an idle engine. */
  static async create(options: PipelineOptions): Promise<Pipeline> {
    const resolved = resolvePipelineOptions(options);
    const parts = options.backend !== undefined ? customParts(options) : await loadModelParts(options, resolved);
    try {
      const specs = planPools(parts.backend.shape, resolved.kvBytes, resolved.precision, resolved.blockSize, resolved.maxNumSeqs);
      if (specs.some((spec) => spec.numBlocks < 2)) {
        throw new InvalidOptionError('kvCache.size', `${resolved.kvBytes} bytes cannot hold a single block of this model`);
      }
      const kv = new KvCacheManager(specs, { prefixCaching: resolved.prefixCaching });
      const extraPoolBlocks = Object.fromEntries(specs.slice(1).map((spec) => [spec.name, spec.numBlocks]));
      await parts.backend.allocateCache({
        numBlocks: specs[0]!.numBlocks,
        blockSize: resolved.blockSize,
        precision: resolved.precision,
        ...(specs.length > 1 && { extraPoolBlocks }),
      });
      return new Pipeline(parts, options, resolved, kv);
    } catch (error) {
      if (options.backend === undefined) await parts.backend.dispose();
      throw error;
    }
  }

  /** Generates a completion of `prompt` (text, or token ids used as they are). */
  async generate(prompt: string | readonly number[], options: GenerateOptions = {}): Promise<GenerateResult> {
    const prepared = this.preparePrompt(prompt);
    let text = '';
    const tokenIds: number[] = [];
    const logprobs: TokenLogprobs[] = [];
    for await (const item of this.run(prepared, this.resolve(options, false), options.signal)) {
      if (item.kind === 'delta') {
        text += item.delta.text;
        tokenIds.push(...item.delta.tokenIds);
        for (const sampled of item.delta.logprobs ?? []) logprobs.push(toTokenLogprobs(sampled));
      } else {
        text += item.info.finalText;
        return {
          text,
          tokenIds,
          finishReason: item.finishReason,
          usage: item.usage,
          ...(logprobs.length > 0 && { logprobs }),
        };
      }
    }
    throw new EngineError('the request ended without a finish');
  }

  /** Renders `messages` with the chat template, generates, and parses reasoning and tool calls. */
  async chat(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    const prepared = this.prepareChat(messages, options);
    const parser = this.outputParser(prepared, options);
    let text = '';
    for await (const item of this.run(prepared, this.resolve(options, parser.parsesToolCalls), options.signal)) {
      if (item.kind === 'delta') {
        text += item.delta.text;
        parser.push(item.delta.text, item.delta.tokenIds);
      } else {
        text += item.info.finalText;
        parser.push(item.info.finalText, []);
        parser.end();
        const parsed: ParsedOutput = parser.result();
        return { ...parsed, text, finishReason: withToolCalls(item.finishReason, parsed), usage: item.usage };
      }
    }
    throw new EngineError('the request ended without a finish');
  }

  /**
   * Streams typed parts of a completion (a string prompt) or a chat reply (an
   * array of messages). Options are checked at once; the request starts when
   * iteration starts, and breaking out of the loop cancels it.
   */
  stream(input: string | readonly number[] | readonly ChatMessage[], options: ChatOptions = {}): AsyncIterable<StreamPart> {
    const prepared = isMessages(input) ? this.prepareChat(input, options) : this.preparePrompt(input);
    const parser = this.outputParser(prepared, options);
    // Validated now, so a bad option throws here rather than on the first next().
    const resolved = this.resolve(options, parser.parsesToolCalls);
    const wantTokens = resolved.sampling.logprobs > 0;
    const run = (): AsyncGenerator<RunItem> => this.run(prepared, resolved, options.signal);
    let iterated = false;
    return {
      [Symbol.asyncIterator]: () => {
        if (iterated) throw new InvalidOptionError('stream', 'a stream can be iterated once; call stream() again for a new request');
        iterated = true;
        return toParts(run(), parser, wantTokens);
      },
    };
  }

  /** Cache usage per pool, queue lengths and counters. */
  stats(): PipelineStats {
    const kv = this.engine.kv;
    return {
      kv: { pools: kv.stats(), blockSize: kv.blockSize, prefixCaching: kv.prefixCaching },
      running: this.engine.scheduler.running.length,
      waiting: this.engine.scheduler.waiting.length,
      preemptions: this.engine.scheduler.preemptions,
      steps: this.engine.numSteps,
      requests: { started: this.started, finished: this.finished },
      generatedTokens: this.generated,
    };
  }

  /** Ends every pending request with PipelineClosedError and frees the model. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.engine.close(new PipelineClosedError('the pipeline was closed while the request ran'));
      await this.engine.whenIdle();
      await this.backend.dispose();
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private preparePrompt(prompt: string | readonly number[]): PreparedPrompt {
    if (typeof prompt === 'string') {
      const promptTokenIds = this.tokenizer.encode(prompt);
      if (promptTokenIds.length === 0) throw new InvalidOptionError('prompt', 'the prompt encodes to no tokens');
      return { promptTokenIds, promptText: prompt, chat: false, tools: undefined };
    }
    if (Array.isArray(prompt) && prompt.length === 0) throw new InvalidOptionError('prompt', 'the prompt has no tokens');
    if (!Array.isArray(prompt) || prompt.some((id) => !Number.isInteger(id) || id < 0 || id >= this.backend.shape.vocabSize)) {
      throw new InvalidOptionError('prompt', `expected a string or an array of token ids below ${this.backend.shape.vocabSize}`);
    }
    return { promptTokenIds: [...prompt], promptText: undefined, chat: false, tools: undefined };
  }

  private prepareChat(messages: readonly ChatMessage[], options: ChatOptions): PreparedPrompt {
    if (!isMessages(messages)) throw new InvalidOptionError('messages', 'expected an array of { role, content }');
    const template = requireChatTemplate(this.chatTemplate, this.options.model);
    const promptText = template.render(messages, {
      ...(options.tools && { tools: options.tools }),
      addGenerationPrompt: true,
      ...(options.templateKwargs && { kwargs: options.templateKwargs }),
    });
    // The template writes BOS itself when the model wants one.
    const promptTokenIds = this.tokenizer.encode(promptText, { addSpecialTokens: false });
    return { promptTokenIds, promptText, chat: true, tools: options.tools };
  }

  /**
   * Validates a request's options. Special tokens are kept in the text when a
   * tool parser reads it (some formats mark calls with special tokens), unless
   * the request says otherwise.
   */
  private resolve(options: GenerateOptions, parsesToolCalls: boolean): ResolvedRequestOptions {
    const resolved = resolveRequestOptions(options, this.generationDefaults);
    return { ...resolved, skipSpecialTokens: resolved.skipSpecialTokens ?? !parsesToolCalls };
  }

  private outputParser(prepared: PreparedPrompt, options: ChatOptions): OutputParser {
    const names = { ...this.options.parsers, ...options.parsers };
    if (!prepared.chat) return new OutputParser();
    return new OutputParser(createParserStream(names, prepared.tools ?? [], prepared.promptText ?? ''), names.tool !== undefined);
  }

  /**
   * Submits a request and yields its deltas, then one finish item carrying the
   * final reason and usage. Rejects with a typed error for aborts, closing and
   * failures. Leaving the loop early aborts the request.
   */
  private async *run(
    prepared: PreparedPrompt,
    resolved: ResolvedRequestOptions,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<RunItem> {
    if (this.closed) throw new PipelineClosedError();
    if (signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: signal.reason });
    const promptTokens = prepared.promptTokenIds.length;
    // generation_config's max_length caps prompt + output, like the model's context.
    const limit = Math.min(this.backend.shape.maxContextLength, this.generationDefaults.maxLength ?? Infinity);
    const room = Math.max(1, limit - promptTokens);
    const spec: RequestSpec = {
      promptTokenIds: prepared.promptTokenIds,
      sampling: resolved.sampling,
      stop: {
        maxTokens: resolved.maxTokens ?? room,
        stopTokenIds: resolved.stopTokenIds,
        stopStrings: resolved.stopStrings,
        ignoreEos: resolved.ignoreEos,
      },
      priority: resolved.priority,
      skipSpecialTokens: resolved.skipSpecialTokens,
    };
    const channel = new RequestChannel();
    const added = this.engine.add(spec, channel);
    if (!added.ok) {
      if (added.error.kind === 'Closed') throw new PipelineClosedError();
      throw new PromptTooLongError(added.error.message);
    }
    const requestId = added.value;
    this.started++;
    const onAbort = (): void => this.engine.abort(requestId, new AbortError('the request was aborted', { cause: signal?.reason }));
    signal?.addEventListener('abort', onAbort, { once: true });
    let completion = 0;
    try {
      this.safeEmit('request-start', { requestId, promptTokens });
      for await (const item of channel) {
        if (item.kind === 'delta') {
          completion += item.delta.tokenIds.length;
          this.generated += item.delta.tokenIds.length;
          yield item;
          continue;
        }
        this.finished++;
        const request = item.info;
        const usage: Usage = { promptTokens, completionTokens: completion, cachedPromptTokens: item.info.cachedPromptTokens };
        this.safeEmit('request-finish', { requestId, finishReason: request.reason, usage });
        if (request.reason === 'aborted') throw request.error instanceof WeftError ? request.error : new AbortError();
        if (request.reason === 'error') {
          const cause = request.error;
          throw cause instanceof WeftError ? cause : new BackendError(`the request failed: ${cause?.message ?? 'unknown error'}`, { cause });
        }
        yield { kind: 'finish', info: item.info, finishReason: request.reason, usage };
        return;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // A consumer that leaves early (break, return, throw) cancels the request.
      if (!channel.isFinished) this.engine.abort(requestId, new AbortError('the consumer stopped reading'));
    }
  }

  /**
   * Emits an event to user listeners. A listener that throws must not fail a
   * request or the engine: its error goes to the logger, once, and no further.
   */
  private safeEmit<E extends keyof PipelineEvents>(event: E, ...args: Parameters<PipelineEvents[E]>): void {
    try {
      (this.emit as (event: E, ...args: Parameters<PipelineEvents[E]>) => boolean)(event, ...args);
    } catch (error) {
      if (event === 'log') return;
      try {
        this.options.logger?.(`a "${event}" listener threw: ${String(error)}`);
      } catch {
        // The logger is user code too.
      }
    }
  }
}

/** What run() yields: the engine's deltas, then one finish with the final reason and usage. */
type RunItem = { kind: 'delta'; delta: RequestDelta } | { kind: 'finish'; info: FinishInfo; finishReason: FinishReason; usage: Usage };

/** Maps a request's run to stream parts through its output parser. */
async function* toParts(items: AsyncGenerator<RunItem>, parser: OutputParser, wantTokens: boolean): AsyncGenerator<StreamPart> {
  for await (const item of items) {
    if (item.kind === 'delta') {
      if (wantTokens) {
        const logprobs = (item.delta.logprobs ?? []).map(toTokenLogprobs);
        yield { type: 'token', tokenIds: item.delta.tokenIds, ...(logprobs.length > 0 && { logprobs }) };
      }
      yield* parser.push(item.delta.text, item.delta.tokenIds);
    } else {
      yield* parser.push(item.info.finalText, []);
      yield* parser.end();
      const parsed = parser.result();
      const finishReason = withToolCalls(item.finishReason, parsed);
      yield { type: 'finish', finishReason, usage: item.usage, ...(parsed.warnings.length > 0 && { warnings: parsed.warnings }) };
    }
  }
}

/** A reply that ended normally after emitting tool calls finishes with 'tool_calls'. */
function withToolCalls(reason: FinishReason, parsed: ParsedOutput): FinishReason {
  return parsed.toolCalls.length > 0 && reason === 'stop' ? 'tool_calls' : reason;
}

function isMessages(input: unknown): input is readonly ChatMessage[] {
  return Array.isArray(input) && input.length > 0 && input.every((m) => m !== null && typeof m === 'object' && typeof m.role === 'string');
}

function toTokenLogprobs(sampled: { token: number; logprob?: number; topLogprobs?: TokenLogprob[] }): TokenLogprobs {
  return { token: sampled.token, logprob: sampled.logprob ?? 0, topLogprobs: sampled.topLogprobs ?? [] };
}

function customParts(options: PipelineOptions): ModelParts {
  return {
    backend: options.backend!,
    tokenizer: options.tokenizer!,
    chatTemplate: options.chatTemplate,
    generationDefaults: options.generationDefaults ?? {},
  };
}

async function loadModelParts(options: PipelineOptions, resolved: ResolvedPipelineOptions): Promise<ModelParts> {
  const modelDir = options.model!;
  const [{ loadText }, { CpuBackend }] = await Promise.all([import('./text/load-text.js'), import('./backends/cpu/cpu-backend.js')]);
  const text = await loadText(modelDir);
  const backend = await CpuBackend.load(modelDir, {
    ...(resolved.threads !== undefined && { threads: resolved.threads }),
    ...(resolved.quantize !== undefined && { quantize: resolved.quantize }),
    ...(options.onProgress && { onProgress: options.onProgress }),
  });
  return { backend, tokenizer: text.tokenizer, chatTemplate: text.chatTemplate, generationDefaults: text.generationDefaults };
}
