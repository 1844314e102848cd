/**
 * A weft Pipeline as the AI SDK's LanguageModelV3 (`@ai-sdk/provider` 3.x, used
 * by `ai` 6). Both doGenerate and doStream run one weft stream() request, so
 * they cannot disagree; doGenerate collects what doStream would have streamed.
 *
 * Cancelling: the call's abortSignal aborts the weft request (only that one;
 * the batch carries on), and so does cancelling the returned ReadableStream.
 */

import { randomUUID } from 'node:crypto';
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
  SharedV3Warning,
} from '@ai-sdk/provider';
import { InvalidOptionError } from '../errors.js';
import type { PipelineApi } from '../pipeline/face.js';
import type { StreamPart } from '../pipeline/stream-parts.js';
import type { ChatMessage } from '../text/types.js';
import { toChatOptions, type Enforce, type WeftCallSettings } from './call-options.js';
import type { PipelineSource } from '../integrations/pipeline-source.js';
import { toChatMessages } from './prompt.js';
import { StreamPartTranslator } from './stream-parts.js';

export interface WeftModelSettings {
  /** Defaults for `providerOptions.weft` on every call; a call's own values win. */
  readonly defaults?: WeftCallSettings;
}

export class WeftLanguageModel implements LanguageModelV3, AsyncDisposable {
  readonly specificationVersion = 'v3' as const;
  readonly provider = 'weft';
  /** weft reads no URLs: the AI SDK downloads nothing for it, and file parts are refused. */
  readonly supportedUrls: Record<string, RegExp[]> = {};

  constructor(
    readonly modelId: string,
    private readonly source: PipelineSource,
    private readonly settings: WeftModelSettings = {},
  ) {}

  /** The pipeline this model runs on (opened on first use when the model was given options). */
  pipeline(): Promise<PipelineApi> {
    return this.source.get();
  }

  /** Closes the pipeline if this model opened it (`weft('path')`); never one you passed in. */
  close(): Promise<void> {
    return this.source.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async doStream(call: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const pipeline = await this.source.get();
    const prompt = toChatMessages(call.prompt);
    // stream() checks every option now, so a bad one rejects this call with InvalidOptionError;
    // guidance the pipeline cannot give (toolChoice, responseFormat) is dropped with a warning instead.
    const { converted, parts } = streamGuided(pipeline, prompt.messages, call, this.settings.defaults);
    const responseId = `weft-${randomUUID()}`;
    const translator = new StreamPartTranslator(`${responseId}-call`, converted.requirement);
    const head: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [...prompt.warnings, ...converted.warnings] },
      { type: 'response-metadata', id: responseId, timestamp: new Date(), modelId: this.modelId },
    ];
    const includeRaw = call.includeRawChunks === true;
    let iterator: AsyncIterator<StreamPart> | undefined;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      start(controller) {
        for (const part of head) controller.enqueue(part);
      },
      // One weft part per pull (it may translate to none, e.g. a token part; then pull runs again).
      async pull(controller) {
        iterator ??= parts[Symbol.asyncIterator]();
        try {
          const next = await iterator.next();
          if (next.done === true) return controller.close();
          if (includeRaw) controller.enqueue({ type: 'raw', rawValue: next.value });
          for (const part of translator.translate(next.value)) controller.enqueue(part);
        } catch (error) {
          // An abort errors the stream (the AI SDK turns that into its own abort part);
          // any other failure of this request is reported in-stream and finishes it.
          if (isAbortError(error)) return controller.error(error);
          controller.enqueue({ type: 'error', error });
          controller.enqueue({ type: 'finish', finishReason: { unified: 'error', raw: 'error' }, usage: unknownUsage() });
          controller.close();
        }
      },
      // The reader went away: leaving weft's iterator aborts the request and frees its cache.
      async cancel() {
        await iterator?.return?.();
      },
    });
    const { signal: _signal, ...body } = converted.options;
    return { stream, request: { body: { messages: prompt.messages, ...body } } };
  }

  async doGenerate(call: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const { stream, request } = await this.doStream(call);
    const content: LanguageModelV3Content[] = [];
    const warnings: SharedV3Warning[] = [];
    let response: { id?: string; timestamp?: Date; modelId?: string } = {};
    let finish: { finishReason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage; providerMetadata?: SharedV3ProviderMetadata } | undefined;
    const open = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
    const reader = stream.getReader();
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case 'stream-start':
          warnings.push(...part.warnings);
          break;
        case 'response-metadata': {
          const { type: _type, ...metadata } = part;
          response = metadata;
          break;
        }
        case 'text-start':
        case 'reasoning-start': {
          const item = { type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const), text: '' };
          open.set(part.id, item);
          content.push(item);
          break;
        }
        case 'text-delta':
        case 'reasoning-delta':
          open.get(part.id)!.text += part.delta;
          break;
        case 'tool-call':
          content.push(part);
          break;
        case 'error':
          throw part.error;
        case 'finish':
          finish = part;
          break;
        default:
          break; // block ends and tool-input previews carry nothing the result needs
      }
    }
    if (finish === undefined) throw new Error('weft: the stream ended without a finish part');
    const weftMetadata = (finish.providerMetadata?.weft ?? {}) as { warnings?: string[]; toolChoiceMet?: boolean };
    for (const message of weftMetadata.warnings ?? []) warnings.push({ type: 'other', message });
    if (weftMetadata.toolChoiceMet === false) {
      warnings.push({ type: 'other', message: 'toolChoice was not honoured: the model did not call the required tool (weft could not enforce it for this call)' });
    }
    return {
      content,
      finishReason: finish.finishReason,
      usage: finish.usage,
      ...(finish.providerMetadata !== undefined && { providerMetadata: finish.providerMetadata }),
      request,
      response,
      warnings,
    };
  }
}

/**
 * pipeline.stream() with the call's guidance enforced; when the pipeline refuses a guided option
 * it cannot give (InvalidOptionError for `toolChoice`: a tool parser without a grammar or none
 * at all; for `responseFormat.*`: an unsupported schema keyword), the call is converted again
 * with that guidance off, which warns. Any other refusal rejects the call.
 */
function streamGuided(pipeline: PipelineApi, messages: ChatMessage[], call: LanguageModelV3CallOptions, defaults: WeftCallSettings | undefined) {
  let enforce: Enforce = { toolChoice: true, responseFormat: true };
  for (;;) {
    const converted = toChatOptions(call, defaults, enforce);
    try {
      return { converted, parts: pipeline.stream(messages, converted.options) };
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      const refused = error.message;
      if (error.option === 'toolChoice' && enforce.toolChoice === true) enforce = { ...enforce, toolChoice: { refused } };
      else if (error.option.startsWith('responseFormat') && enforce.responseFormat === true) enforce = { ...enforce, responseFormat: { refused } };
      else throw error;
    }
  }
}

/** weft's AbortError is named "AbortError", as are DOM aborts: what the AI SDK checks for. */
function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

function unknownUsage(): LanguageModelV3Usage {
  return {
    inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: undefined, text: undefined, reasoning: undefined },
  };
}
