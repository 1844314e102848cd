/**
 * The in-process pipeline: the model, engine and backend in this process.
 * Its public face (generate / chat / stream) is PipelineFace's (face.ts); the
 * public `Pipeline` is this class with the create() that also opens isolated
 * and remote pipelines (src/create.ts).
 *
 * Data flows one way: Pipeline -> engine -> backend -> engine -> Pipeline.
 * The pipeline turns text into token ids (prompt.ts), hands requests to the
 * engine (run-request.ts), and turns the engine's deltas back into stream
 * parts (reply.ts), results (results.ts) and typed errors. Each request's
 * options are validated first, before any template is rendered or parser built.
 */

import type { Backend } from '../backends/backend.js';
import { Engine } from '../engine/engine.js';
import type { SchedulerConfig } from '../engine/scheduler.js';
import { embedTexts, type EmbedContext, type EmbedInput, type EmbedOptions, type EmbedResult } from '../embeddings/embed.js';
import { rerankDocuments, type RerankContext, type RerankOptions, type RerankResult } from '../embeddings/rerank.js';
import type { SpeculativeConfig } from '../engine/speculative.js';
import { InvalidOptionError, PipelineClosedError, UnsupportedModelError } from '../errors.js';
import { Guide } from '../guided/guide.js';
import { detectStartsInReasoning } from '../parsers/reasoning/think.js';
import { activeParsers, inferParsers } from '../tool-formats/infer.js';
import { toolGrammarOf } from '../tool-formats/registry.js';
import type { ChatTemplate } from '../text/chat-template.js';
import type { GenerationDefaults, Tokenizer } from '../text/types.js';
import { PipelineFace, type ModelPipeline, type PartRun, type PipelineEvents, type PipelineStats } from './face.js';
import { openModel, type OpenedModel } from './open-model.js';
import { resolvePipelineOptions, resolveRequestOptions, type ChatOptions, type PipelineOptions } from './options.js';
import { prepareChat, preparePrompt, promptLimits, type PreparedPrompt, type PromptLimits } from './prompt.js';
import type { PromptText } from './prompt-text.js';
import { Reply } from './reply.js';
import { runRequest, type RequestPart, type RunContext } from './run-request.js';

/** A model opened for a pipeline, with the options it was opened with. */
interface OpenedPipeline {
  readonly model: OpenedModel;
  readonly options: PipelineOptions;
  readonly scheduler: SchedulerConfig;
  /** The resolved `speculative` option: the default of unguided requests (greedy or sampled). */
  readonly speculative?: SpeculativeConfig;
}

export class InProcessPipeline extends PipelineFace<PipelineEvents> implements ModelPipeline {
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
  private readonly backend: Backend;
  private readonly engine: Engine;
  private readonly options: PipelineOptions;
  private readonly runContext: RunContext;
  private readonly embedContext: EmbedContext;
  private readonly rerankContext: RerankContext;
  /** A base-model folder (no LM head): it embeds, it does not generate. */
  private readonly baseModel: boolean;
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
  /** The pipeline's default speculative decoding (options.speculative), if any. */
  private readonly speculative: SpeculativeConfig | undefined;

  /** Loads a model folder (or wraps a custom backend) in this process and starts an idle engine. */
  static async create(options: PipelineOptions): Promise<InProcessPipeline> {
    return new InProcessPipeline(await InProcessPipeline.open(options));
  }

  /** Opens the model `options` name, in this process: what the constructor takes (the public Pipeline's create() uses it too). */
  protected static async open(options: PipelineOptions): Promise<OpenedPipeline> {
    const resolved = resolvePipelineOptions(options);
    if (options.isolation === 'process') throw new InvalidOptionError('isolation', 'an isolated pipeline is opened by Pipeline.create (src/create.ts)');
    const model = await openModel(options, resolved);
    if (resolved.speculative !== undefined) checkSpeculativeModel(model.backend);
    // Without a parsers option, the ones the model's own files point to (its template rendered in the text sandbox).
    const parsers = options.parsers ?? await inferParsers(undefined, {
      render: (messages, renderOptions) => model.promptText.render(messages, renderOptions, Infinity),
      hasToken: (text) => model.tokenizer.tokenToId(text) !== undefined,
    });
    return {
      model,
      options: { ...options, parsers },
      scheduler: { maxNumSeqs: resolved.maxNumSeqs, maxNumBatchedTokens: model.maxNumBatchedTokens, policy: resolved.policy, speculativeRows: resolved.speculativeRows },
      ...(resolved.speculative !== undefined && { speculative: resolved.speculative }),
    };
  }

  protected constructor({ model, options, scheduler, speculative }: OpenedPipeline) {
    super();
    this.speculative = speculative;
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
    this.baseModel = model.baseModel;
    this.embedContext = {
      engine: this.engine,
      promptText: model.promptText,
      config: model.embedding,
      maxTextTokens: model.backend.shape.wholeSequences === true
        ? Math.min(model.backend.shape.maxContextLength, scheduler.maxNumBatchedTokens)
        : model.backend.shape.maxContextLength - 1,
      vocabSize: model.backend.shape.vocabSize,
      hiddenSize: model.backend.shape.hiddenSize,
      isClosed: () => this.closed,
    };
    this.rerankContext = {
      engine: this.engine,
      promptText: model.promptText,
      maxPairTokens: this.embedContext.maxTextTokens,
      hiddenSize: model.backend.shape.hiddenSize,
      reranker: model.reranker,
      isClosed: () => this.closed,
    };
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

  /**
   * One request's raw part stream (parts and `raw` parts) as generate(),
   * chat() and stream() read it. For weft's isolated pipeline, whose child
   * runs this and sends the parts to the host.
   * @internal
   */
  runParts(input: unknown, options: ChatOptions, chat: boolean): AsyncGenerator<RequestPart> {
    return this.request(input, options, chat)();
  }

  /**
   * One vector per text (a string: one vector), through the same engine as
   * generation: the texts run in the same steps as other requests, pooled and
   * normalised as the model folder says (docs/embeddings.md).
   */
  embed(input: EmbedInput, options: EmbedOptions = {}): Promise<EmbedResult> {
    return embedTexts(this.embedContext, input, options);
  }

  /**
   * One relevance score per document against `query`, and the documents by
   * score, through the same engine as generation (docs/reranking.md).
   */
  rerank(query: string, documents: readonly string[], options: RerankOptions = {}): Promise<RerankResult> {
    return rerankDocuments(this.rerankContext, query, documents, options);
  }

  /** Cache usage per pool, queue lengths and counters. */
  stats(): PipelineStats {
    return {
      ...this.engine.stats(),
      requests: { started: this.started, finished: this.finished },
      generatedTokens: this.generated,
    };
  }

  /** Ends every pending request with PipelineClosedError and frees the model. Idempotent. */
  override close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.engine.close(new PipelineClosedError('the pipeline was closed while the request ran'));
      await this.engine.whenIdle();
      await this.promptText.close();
      await this.backend.dispose();
    })();
    return this.closing;
  }

  /**
   * Checks a request at once: its options, then its prompt (token ids,
   * messages, sizes). Returns the run, which starts when it is first read:
   * the prompt is encoded (a chat rendered first, in the text sandbox for a
   * model folder's template), then its reply parsers are set up. Special tokens
   * stay in the text when a tool parser reads it (some formats mark calls with
   * them), unless the request says otherwise.
   */
  protected override request(input: unknown, options: ChatOptions, chat: boolean): PartRun {
    if (this.baseModel)
      throw new UnsupportedModelError('this model folder holds a base model without an LM head (e.g. Qwen3Model as embedding models are saved, or an encoder such as BertModel): it can embed(), not generate');
    const resolved = resolveRequestOptions(options, this.generationDefaults, chat);
    if (resolved.speculative !== undefined && resolved.speculative !== false) checkSpeculativeModel(this.backend);
    // The pipeline's default applies where the request says nothing; the engine uses it for unguided requests only.
    const speculative = resolved.speculative ?? this.speculative;
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
      const newReply = (): Reply => new Reply(names, prepared.tools, prepared.promptText ?? '');
      yield* runRequest(ctx, prepared, { ...resolved, skipSpecialTokens, speculative }, newReply, options.signal, grammarFor(prepared.promptText));
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

/**
 * Speculative decoding rolls rejected draft tokens back out of the cache
 * (KvCacheManager.truncate, K7). A hybrid model's linear-attention state is
 * updated in place by every token and cannot be rolled back that way, so
 * speculation is refused for it (docs/speculative.md).
 */
function checkSpeculativeModel(backend: Backend): void {
  const pools = backend.shape.extraPools ?? [];
  if (pools.length === 0) return;
  throw new InvalidOptionError(
    'speculative',
    `this model keeps recurrent state (its ${pools.map((pool) => pool.name).join(', ')} pool), which cannot be rolled back past rejected draft tokens: leave speculative out for hybrid (linear-attention) models`,
  );
}
