/**
 * Pipeline: the public face of weft. create / generate / chat / stream / stats / close.
 *
 * Data flows one way: Pipeline -> engine -> backend -> engine -> Pipeline.
 * The pipeline turns text into token ids (prompt.ts), hands requests to the
 * engine (run-request.ts), and turns the engine's deltas back into stream
 * parts (reply.ts), results (results.ts) and typed errors. Each request's
 * options are validated first, before any template is rendered or parser built.
 */

import { EventEmitter } from 'eventemitter3';
import type { Backend } from '../backends/backend.js';
import type { RemoteOptions, RemotePipeline } from '../remote/remote-pipeline.js';
import { Engine, type StepInfo } from '../engine/engine.js';
import type { PoolStats } from '../engine/kv/kv-cache-manager.js';
import type { SchedulerConfig } from '../engine/scheduler.js';
import { InvalidOptionError, PipelineClosedError } from '../errors.js';
import { Guide } from '../guided/guide.js';
import { detectStartsInReasoning } from '../parsers/reasoning/think.js';
import { activeParsers, inferParsers } from '../tool-formats/infer.js';
import { toolGrammarOf } from '../tool-formats/registry.js';
import type { ChatTemplate } from '../text/chat-template.js';
import type { GenerationDefaults, Tokenizer } from '../text/types.js';
import type { ChatInputMessage } from './messages.js';
import { openModel, type OpenedModel } from './open-model.js';
import { resolvePipelineOptions, resolveRequestOptions, type ChatOptions, type GenerateOptions, type PipelineOptions } from './options.js';
import { isChatInput, prepareChat, preparePrompt, promptLimits, type PreparedPrompt, type PromptLimits } from './prompt.js';
import type { PromptText } from './prompt-text.js';
import { Reply } from './reply.js';
import { foldChat, foldGenerate, streamParts, type ChatResult, type GenerateResult } from './results.js';
import { runRequest, type RequestPart, type RunContext } from './run-request.js';
import type { FinishReason, StreamPart, Usage } from './stream-parts.js';

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
  /** The request's first generated tokens reached its consumer (time to first token). */
  'request-first-token': (info: { requestId: number }) => void;
  /** With the reason the request's result or finish part reports (`tool_calls` included), or `aborted` / `error`. */
  'request-finish': (info: { requestId: number; finishReason: FinishReason; usage: Usage }) => void;
  /** Engine log lines (a request or a step failed). */
  log: (message: string) => void;
}

export class Pipeline extends EventEmitter<PipelineEvents> implements AsyncDisposable {
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
  private readonly backend: Backend;
  private readonly engine: Engine;
  private readonly options: PipelineOptions;
  private readonly runContext: RunContext;
  private readonly promptText: PromptText;
  private readonly promptLimits: PromptLimits;
  /** Guided generation's vocabulary and grammars, built on the first guided request. */
  private readonly guide: Guide;
  private closed = false;
  private closing: Promise<void> | undefined;
  private started = 0;
  private finished = 0;
  private generated = 0;
  private warnedNoToolParser = false;

  /** Loads a model folder (or wraps a custom backend) and starts an idle engine. */
  static create(options: { remote: RemoteOptions }): Promise<RemotePipeline>;
  static create(options: PipelineOptions): Promise<Pipeline>;
  /** With `{ remote }`: the same API over an OpenAI-compatible server (src/remote/, docs/scaling.md). */
  static async create(options: PipelineOptions | { remote: RemoteOptions }): Promise<Pipeline | RemotePipeline> {
    if (options !== null && typeof options === 'object' && 'remote' in options && options.remote !== undefined) {
      const others = Object.keys(options).filter((key) => key !== 'remote');
      if (others.length > 0) throw new InvalidOptionError('remote', `a remote pipeline takes no local options (got ${others.join(', ')})`);
      // Loaded on demand: in-process users never load the HTTP client.
      const { RemotePipeline } = await import('../remote/remote-pipeline.js');
      return RemotePipeline.create({ remote: options.remote });
    }
    return Pipeline.createLocal(options as PipelineOptions);
  }

  private static async createLocal(options: PipelineOptions): Promise<Pipeline> {
    const resolved = resolvePipelineOptions(options);
    if (options.isolation === 'process') {
      // Same public API, served by a child process (src/isolation/); imported only when asked for.
      const { IsolatedPipeline } = await import('../isolation/host.js');
      return (await IsolatedPipeline.start(options)) as unknown as Pipeline;
    }
    const model = await openModel(options, resolved);
    // Without a parsers option, the ones the model's own files point to (its template rendered in the text sandbox).
    const parsers = options.parsers ?? await inferParsers(undefined, {
      render: (messages, renderOptions) => model.promptText.render(messages, renderOptions, Infinity),
      hasToken: (text) => model.tokenizer.tokenToId(text) !== undefined,
    });
    return new Pipeline(model, { ...options, parsers }, { maxNumSeqs: resolved.maxNumSeqs, maxNumBatchedTokens: model.maxNumBatchedTokens, policy: resolved.policy });
  }

  private constructor(model: OpenedModel, options: PipelineOptions, scheduler: SchedulerConfig) {
    super();
    this.backend = model.backend;
    this.tokenizer = model.tokenizer;
    this.chatTemplate = model.chatTemplate;
    this.generationDefaults = model.generationDefaults;
    this.options = options;
    this.promptText = model.promptText;
    this.promptLimits = promptLimits(Math.min(model.backend.shape.maxContextLength, model.generationDefaults.maxLength ?? Infinity), model.tokenizer);
    this.guide = new Guide(model.tokenizer, model.backend.shape.vocabSize, toolGrammarOf);
    this.engine = new Engine({
      backend: model.backend,
      kv: model.kv,
      scheduler,
      decoder: model.tokenizer,
      eosTokenIds: [...new Set([...model.tokenizer.eosTokenIds, ...(model.generationDefaults.eosTokenIds ?? [])])],
      observer: {
        onStep: (info) => this.safeEmit('step', info),
        onPreempt: (requestId) => this.safeEmit('request-preempted', { requestId }),
        onLog: (message) => {
          this.safeEmit('log', message);
          options.logger?.(message); // the engine drops what a logger throws
        },
      },
    });
    this.runContext = {
      engine: this.engine,
      maxContextLength: model.backend.shape.maxContextLength,
      maxLength: model.generationDefaults.maxLength,
      isClosed: () => this.closed,
      onStart: (requestId, promptTokens) => {
        this.started++;
        this.safeEmit('request-start', { requestId, promptTokens });
      },
      onTokens: (count) => (this.generated += count),
      onFirstToken: (requestId) => this.safeEmit('request-first-token', { requestId }),
      onFinish: (requestId, finishReason, usage) => {
        this.finished++;
        this.safeEmit('request-finish', { requestId, finishReason, usage });
      },
    };
  }

  /** Generates a completion of `prompt` (text, or token ids used as they are). */
  async generate(prompt: string | readonly number[], options: GenerateOptions = {}): Promise<GenerateResult> {
    return foldGenerate(this.request(prompt, options, false)());
  }

  /**
   * Renders `messages` with the chat template, generates, and parses reasoning
   * and tool calls. Messages may be weft's or OpenAI-shaped (see messages.ts).
   */
  async chat(messages: readonly ChatInputMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    return foldChat(this.request(messages, options, true)());
  }

  /**
   * Streams typed parts of a completion (a string or token ids) or a chat reply
   * (an array of messages). Options are checked at once; the request starts when
   * iteration starts, and breaking out of the loop cancels it.
   */
  stream(input: string | readonly number[] | readonly ChatInputMessage[], options: ChatOptions = {}): AsyncIterable<StreamPart> {
    const run = this.request(input, options, isChatInput(input));
    const withTokens = options.logprobs !== undefined && options.logprobs > 0;
    let iterated = false;
    return {
      [Symbol.asyncIterator]: () => {
        if (iterated) throw new InvalidOptionError('stream', 'a stream can be iterated once; call stream() again for a new request');
        iterated = true;
        return streamParts(run(), withTokens);
      },
    };
  }

  /**
   * One request's raw part stream (parts and `raw` parts) as generate(),
   * chat() and stream() read it. For weft's isolated pipeline, whose child
   * runs this and sends the parts to the host.
   * @internal
   */
  runParts(input: unknown, options: ChatOptions, chat: boolean): AsyncGenerator<RequestPart> {
    return this.request(input, options, chat)();
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
      await this.promptText.close();
      await this.backend.dispose();
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Checks a request at once: its options, then its prompt (token ids,
   * messages, sizes). Returns the run, which starts when it is first read:
   * the prompt is encoded (a chat rendered first, in the text sandbox for a
   * model folder's template), then its reply parsers are set up. Special tokens
   * stay in the text when a tool parser reads it (some formats mark calls with
   * them), unless the request says otherwise.
   */
  private request(input: unknown, options: ChatOptions, chat: boolean): () => AsyncGenerator<RequestPart> {
    const resolved = resolveRequestOptions(options, this.generationDefaults, chat);
    const names = chat ? activeParsers(this.options.parsers, options.parsers) : {};
    if (chat && (resolved.tools?.length ?? 0) > 0 && { ...this.options.parsers, ...options.parsers }.tool === undefined) this.warnNoToolParser();
    const skipSpecialTokens = resolved.skipSpecialTokens ?? names.tool === undefined;
    const prepare = chat
      ? prepareChat(input, resolved, this.promptText, this.backend.shape.vocabSize, this.promptLimits, this.options.model)
      : preparePrompt(input, this.promptText, this.backend.shape.vocabSize, this.promptLimits);
    if (resolved.toolChoice !== undefined && names.tool === undefined) {
      throw new InvalidOptionError('toolChoice', 'needs a tool parser to read the calls (parsers.tool)');
    }
    if (resolved.guidedTools === true && names.tool === undefined) {
      throw new InvalidOptionError('guidedTools', 'needs a tool parser to read the calls (parsers.tool)');
    }
    // The pipeline's default only applies where a tool parser reads the reply.
    const guidedTools = names.tool !== undefined && (resolved.guidedTools ?? this.options.guidedTools ?? false);
    // Guided generation's grammar: compiled now so a bad schema is refused at once; which way
    // reasoning may start is known once the prompt is rendered (the same grammar, or a cheap sibling).
    const guide = this.guide;
    const grammarFor = (promptText: string | undefined) =>
      guide.grammarFor({
        ...(resolved.responseFormat !== undefined && { responseFormat: resolved.responseFormat }),
        ...(resolved.toolChoice !== undefined && { toolChoice: resolved.toolChoice }),
        tools: resolved.tools ?? [],
        ...(names.tool !== undefined && { toolParser: names.tool }),
        ...(names.reasoning !== undefined && { reasoningParser: names.reasoning }),
        guidedTools,
        ...(resolved.parallelToolCalls !== undefined && { parallelToolCalls: resolved.parallelToolCalls }),
        reasoning: names.reasoning === undefined ? 'none' : promptText !== undefined && detectStartsInReasoning(promptText) ? 'open' : 'optional',
      });
    grammarFor(undefined);
    const ctx = this.runContext;
    return async function* run(): AsyncGenerator<RequestPart> {
      let prepared: PreparedPrompt;
      try {
        prepared = await prepare();
      } catch (error) {
        if (ctx.isClosed()) throw new PipelineClosedError();
        throw error;
      }
      const reply = new Reply(names, prepared.tools, prepared.promptText ?? '');
      yield* runRequest(ctx, prepared, { ...resolved, skipSpecialTokens }, reply, options.signal, grammarFor(prepared.promptText));
    };
  }

  /** A chat with tools and no tool parser: said once per pipeline, through its log. */
  private warnNoToolParser(): void {
    if (this.warnedNoToolParser) return;
    this.warnedNoToolParser = true;
    const message = 'a chat offers tools, but no tool parser reads the reply (none was given, and the chat template shows no format weft knows): calls stay in its text; set parsers.tool';
    this.safeEmit('log', message);
    try {
      this.options.logger?.(message);
    } catch {
      // The logger is user code.
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
