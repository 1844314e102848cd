/**
 * `ChatWeft`: a LangChain.js chat model (BaseChatModel from @langchain/core)
 * over a weft Pipeline: invoke, stream (text, reasoning and tool-call chunks),
 * bindTools, and abort through the call's `signal`, which cancels only that
 * request in weft's batch.
 *
 * Lifetime as in weft/ai-sdk: a Pipeline you pass in stays yours to close;
 * options or a model folder make ChatWeft open one on first use and close it
 * in close().
 */
import { randomUUID } from 'node:crypto';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, type BaseChatModelCallOptions, type BaseChatModelParams, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk, type BaseMessage, type UsageMetadata } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { Runnable } from '@langchain/core/runnables';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { InvalidOptionError } from '../errors.js';
import type { ToolChoice } from '../guided/guide.js';
import type { PipelineApi } from '../pipeline/face.js';
import type { ChatOptions } from '../pipeline/options.js';
import type { StreamPart, Usage } from '../pipeline/stream-parts.js';
import type { ChatMessage, ToolDefinition } from '../text/types.js';
import { pipelineSource, type PipelineInput, type PipelineSource } from '../integrations/pipeline-source.js';
import { toChatMessages } from './messages.js';

/** weft request options a call may set (besides `stop` and `signal`, which LangChain has). */
export type WeftRequestOptions = Omit<ChatOptions, 'stop' | 'signal' | 'tools'>;

export interface ChatWeftCallOptions extends BaseChatModelCallOptions {
  /** Tools in the OpenAI / Hugging Face shape; bindTools() sets these. */
  tools?: ToolDefinition[];
  /** Per-call weft options (maxTokens, temperature, seed, parsers, templateKwargs, guidedTools, ...). */
  weft?: WeftRequestOptions;
  /** OpenAI's spelling, as ChatOpenAI takes it: weft's parallelToolCalls (false: at most one call). */
  parallel_tool_calls?: boolean;
}

export interface ChatWeftFields extends BaseChatModelParams, WeftRequestOptions {
  /** A Pipeline you opened (you close it), or Pipeline.create options / a model folder (ChatWeft opens and closes it). */
  pipeline: PipelineInput;
}

export class ChatWeft extends BaseChatModel<ChatWeftCallOptions, AIMessageChunk> {
  private readonly source: PipelineSource;
  private readonly defaults: WeftRequestOptions;

  static override lc_name(): string {
    return 'ChatWeft';
  }

  constructor(fields: ChatWeftFields) {
    // Checks the shapes first: new ChatWeft('path') or new ChatWeft({ model }) get an InvalidOptionError saying how it is called.
    const source = pipelineSource(fields, 'ChatWeft');
    const { pipeline: _pipeline, callbacks, maxConcurrency, maxRetries, onFailedAttempt, verbose, tags, metadata, cache, disableStreaming, outputVersion, ...defaults } = fields;
    super({ callbacks, maxConcurrency, maxRetries, onFailedAttempt, verbose, tags, metadata, cache, disableStreaming, outputVersion });
    this.source = source;
    this.defaults = defaults;
  }

  _llmType(): string {
    return 'weft';
  }

  /** The pipeline (opened now if ChatWeft was given options). */
  pipeline(): Promise<PipelineApi> {
    return this.source.get();
  }

  /** Closes the pipeline if ChatWeft opened it; never one you passed in. */
  close(): Promise<void> {
    return this.source.close();
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<ChatWeftCallOptions>): Runnable<BaseLanguageModelInput, AIMessageChunk, ChatWeftCallOptions> {
    return this.withConfig({ tools: tools.map((tool) => convertToOpenAITool(tool) as ToolDefinition), ...kwargs });
  }

  /**
   * One generation, or with `n` > 1 (weft's parallel sampling: one prompt computed once) one per
   * choice, in index order, as ChatOpenAI returns them; invoke() reads the first.
   */
  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    const pieces: (AIMessageChunk | undefined)[] = [];
    const add = (choice: number, piece: AIMessageChunk): void => {
      const message = pieces[choice];
      pieces[choice] = message === undefined ? piece : message.concat(piece);
    };
    if ((this.requestOptions(options, true).n ?? 1) === 1) {
      for await (const chunk of this._streamResponseChunks(messages, options, runManager)) add(0, chunk.message as AIMessageChunk);
    } else {
      const chunks = new ChunkMaker();
      for await (const part of this.streamGuided(await this.source.get(), toChatMessages(messages), options)) {
        const chunk = chunks.of(part);
        if (chunk !== undefined) add(part.choice ?? 0, chunk);
      }
    }
    const generations = Array.from({ length: Math.max(1, pieces.length) }, (_, i) => {
      const final = pieces[i] ?? new AIMessageChunk({ content: '' });
      const aiMessage = new AIMessage({
        content: final.content,
        additional_kwargs: final.additional_kwargs,
        response_metadata: final.response_metadata,
        tool_calls: final.tool_calls,
        invalid_tool_calls: final.invalid_tool_calls,
        ...(final.usage_metadata !== undefined && { usage_metadata: final.usage_metadata }),
        ...(final.id !== undefined && { id: final.id }),
      });
      return { text: aiMessage.text, message: aiMessage };
    });
    return { generations };
  }

  /** Streams one message: `n` > 1 is refused here (LangChain's stream has no choices); invoke() or generate() take it. */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    if ((this.requestOptions(options, true).n ?? 1) !== 1)
      throw new InvalidOptionError('n', "LangChain streams one message: leave n out of stream() (invoke() and generate() return n generations)");
    const pipeline = await this.source.get();
    const chunks = new ChunkMaker();
    for await (const part of this.streamGuided(pipeline, toChatMessages(messages), options)) {
      const chunk = chunks.of(part);
      if (chunk === undefined) continue;
      const text = typeof chunk.content === 'string' ? chunk.content : '';
      yield new ChatGenerationChunk({ text, message: chunk });
      if (text.length > 0) await runManager?.handleLLMNewToken(text);
    }
  }

  /**
   * pipeline.stream() with tool_choice enforced by guided generation; where the pipeline cannot
   * guide it (InvalidOptionError for `toolChoice`: a tool parser without a grammar, or none), the
   * request runs again the old way: prompted, not enforced.
   */
  private streamGuided(pipeline: PipelineApi, messages: ChatMessage[], options: this['ParsedCallOptions']): AsyncIterable<StreamPart> {
    try {
      return pipeline.stream(messages, this.requestOptions(options, true));
    } catch (error) {
      if (!(error instanceof InvalidOptionError) || error.option !== 'toolChoice') throw error;
      return pipeline.stream(messages, this.requestOptions(options, false));
    }
  }

  /**
   * tool_choice: "none", "any" / "required", a tool's name or `{ type: 'function', function: { name } }`.
   * Enforced: all tools are offered and the choice passed on as weft's toolChoice. Not enforced:
   * "none" offers no tools and turns the tool parser off; a name offers only that tool.
   */
  private requestOptions(options: this['ParsedCallOptions'], enforce: boolean): ChatOptions {
    const choice = toToolChoice(options.tool_choice);
    let tools = options.tools ?? [];
    let parsers = options.weft?.parsers ?? this.defaults.parsers;
    const guided = enforce && tools.length > 0 && choice !== 'auto';
    if (!enforce && choice === 'none') {
      tools = [];
      parsers = { ...parsers, tool: undefined };
    } else if (!enforce && typeof choice === 'object') {
      tools = tools.filter((tool) => tool.function.name === choice.name);
    }
    return {
      ...this.defaults,
      ...options.weft,
      ...(parsers !== undefined && { parsers }),
      ...(tools.length > 0 && { tools }),
      ...(guided && { toolChoice: choice }),
      ...(options.parallel_tool_calls !== undefined && { parallelToolCalls: options.parallel_tool_calls }),
      ...(options.stop !== undefined && options.stop.length > 0 && { stop: options.stop }),
      ...(options.signal !== undefined && { signal: options.signal }),
    };
  }
}

/** weft's stream parts as LangChain message chunks, for one reply (its choices apart, n > 1). */
class ChunkMaker {
  private readonly id = `weft-${randomUUID()}`;

  /** The chunk a part makes, or undefined (a tool-call: already streamed as chunks; token: not surfaced). */
  of(part: StreamPart): AIMessageChunk | undefined {
    const { id } = this;
    // weft numbers calls per reply (call_0, ...); LangChain wants ids unique across turns and choices.
    const callId = (index: number): string => `${id}-${part.choice === undefined ? '' : `${part.choice}-`}call-${index}`;
    switch (part.type) {
      case 'text-delta':
        return new AIMessageChunk({ id, content: part.text });
      case 'reasoning-delta':
        return new AIMessageChunk({ id, content: '', additional_kwargs: { reasoning_content: part.text } });
      case 'tool-call-start':
        return new AIMessageChunk({ id, content: '', tool_call_chunks: [{ type: 'tool_call_chunk', index: part.index, id: callId(part.index), name: part.name, args: '' }] });
      case 'tool-call-delta':
        // The deltas of one call concatenate to its JSON arguments, which LangChain parses.
        return new AIMessageChunk({ id, content: '', tool_call_chunks: [{ type: 'tool_call_chunk', index: part.index, args: part.argumentsDelta }] });
      case 'finish':
        return new AIMessageChunk({
          id,
          content: '',
          usage_metadata: toUsageMetadata(part.usage),
          response_metadata: { finish_reason: part.finishReason, model_provider: 'weft', ...(part.warnings && { warnings: [...part.warnings] }) },
        });
      default:
        return undefined;
    }
  }
}

/** LangChain's tool_choice spellings as weft's. */
function toToolChoice(choice: unknown): ToolChoice {
  if (choice === undefined || choice === null || choice === 'auto') return 'auto';
  if (choice === 'none') return 'none';
  if (choice === 'any' || choice === 'required') return 'required';
  if (typeof choice === 'string') return { name: choice };
  const named = choice as { function?: { name?: unknown }; name?: unknown };
  const name = named.function?.name ?? named.name;
  if (typeof name === 'string') return { name };
  throw new InvalidOptionError('tool_choice', 'expected "auto", "none", "any", "required", a tool name or { type: "function", function: { name } }');
}

function toUsageMetadata(usage: Usage): UsageMetadata {
  return {
    input_tokens: usage.promptTokens,
    output_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    input_token_details: { cache_read: usage.cachedPromptTokens },
  };
}
