/**
 * The one public face of weft's pipelines. The in-process pipeline
 * (pipeline.ts), the isolated one (a child process runs the model,
 * isolation/host.ts) and the remote one (an OpenAI-compatible server,
 * remote/remote-pipeline.ts) all implement PipelineApi, and all three inherit
 * generate(), chat() and stream() from PipelineFace, written once here.
 *
 * Each class provides one thing: request(), which checks a request at once
 * and returns its run, a stream of parts (RequestPart: the public stream
 * parts and the raw text behind them). generate() and chat() fold that stream
 * (results.ts) and stream() yields it without the raw parts, so what the three
 * give cannot disagree, and neither can the three pipelines.
 */

import type { EmbedInput, EmbedOptions, EmbedResult } from '../embeddings/embed.js';
import type { RerankOptions, RerankResult } from '../embeddings/rerank.js';
import { EventEmitter } from 'eventemitter3';
import type { StepInfo } from '../engine/engine.js';
import type { PoolStats } from '../engine/kv/kv-cache-manager.js';
import { InvalidOptionError } from '../errors.js';
import type { ChatTemplate } from '../text/chat-template.js';
import type { GenerationDefaults, Tokenizer } from '../text/types.js';
import type { ChatInputMessage } from './messages.js';
import type { ChatOptions, GenerateOptions } from './options.js';
import { isChatInput } from './prompt.js';
import { foldChat, foldGenerate, streamParts, type ChatResult, type GenerateResult } from './results.js';
import type { RequestPart } from './run-request.js';
import type { FinishReason, StreamPart, Usage } from './stream-parts.js';

/** What every pipeline answers to, wherever its model runs. */
export interface PipelineApi extends AsyncDisposable {
  /** Generates a completion of `prompt` (text, or token ids used as they are). */
  generate(prompt: string | readonly number[], options?: GenerateOptions): Promise<GenerateResult>;
  /** Generates a chat reply to `messages` (weft's or OpenAI-shaped), with its reasoning and tool calls parsed. */
  chat(messages: readonly ChatInputMessage[], options?: ChatOptions): Promise<ChatResult>;
  /** Typed parts of a completion (a string or token ids) or a chat reply (an array of messages). */
  stream(input: string | readonly number[] | readonly ChatInputMessage[], options?: ChatOptions): AsyncIterable<StreamPart>;
  /** One vector per text, pooled and normalised as the model says (docs/embeddings.md). */
  embed(input: EmbedInput, options?: EmbedOptions): Promise<EmbedResult>;
  /** One relevance score per document against `query`, and the documents by score (docs/reranking.md). */
  rerank(query: string, documents: readonly string[], options?: RerankOptions): Promise<RerankResult>;
  /** Ends every pending request with PipelineClosedError and frees what the pipeline holds. Idempotent. */
  close(): Promise<void>;
}

export interface PipelineStats {
  readonly kv: { readonly pools: PoolStats[]; readonly blockSize: number; readonly prefixCaching: boolean };
  readonly running: number;
  readonly waiting: number;
  readonly preemptions: number;
  readonly steps: number;
  readonly requests: { readonly started: number; readonly finished: number };
  readonly generatedTokens: number;
  /** Speculative decoding since the pipeline started: draft tokens verified, and accepted (in-process pipelines). */
  readonly speculative?: { readonly drafted: number; readonly accepted: number };
  /** Tokens the model computed since the pipeline started, prompt and generated (in-process pipelines). */
  readonly computedTokens?: number;
  /** Choices of n > 1 requests that shared their prompt by a fork instead of computing it (docs/parallel-sampling.md). */
  readonly forks?: number;
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

/**
 * A pipeline that holds the model, in this process or in a child process
 * (Pipeline, IsolatedPipeline): besides PipelineApi it has the model's
 * tokenizer and template, the engine's stats, and its events.
 */
export interface ModelPipeline extends PipelineApi, EventEmitter<PipelineEvents> {
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly generationDefaults: GenerationDefaults;
  /** Cache usage per pool, queue lengths and counters. */
  stats(): PipelineStats;
}

/** One request's run: started when first read, its parts as they come. */
export type PartRun = () => AsyncGenerator<RequestPart>;

/** No events: a remote pipeline's engine is on the server. */
export type NoEvents = Record<never, never>;

/** generate(), chat() and stream() over the run that a subclass's request() returns. */
export abstract class PipelineFace<Events extends EventEmitter.ValidEventTypes = PipelineEvents> extends EventEmitter<Events> implements PipelineApi {
  async generate(prompt: string | readonly number[], options: GenerateOptions = {}): Promise<GenerateResult> {
    return foldGenerate(this.request(prompt, options, false)());
  }

  async chat(messages: readonly ChatInputMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    return foldChat(this.request(messages, options, true)());
  }

  /**
   * Options are checked at once; the request starts when iteration starts,
   * and breaking out of the loop cancels it.
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

  abstract embed(input: EmbedInput, options?: EmbedOptions): Promise<EmbedResult>;

  abstract rerank(query: string, documents: readonly string[], options?: RerankOptions): Promise<RerankResult>;

  abstract close(): Promise<void>;

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Checks a request at once (throws its typed error) and returns its run. */
  protected abstract request(input: unknown, options: ChatOptions, chat: boolean): PartRun;
}
