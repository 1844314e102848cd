/**
 * What generate(), chat() and stream() make of one request's parts. All three
 * read the same part stream (run-request.ts), so they cannot disagree: the two
 * results are folds over it, and stream() yields it minus the raw parts.
 */

import { EngineError } from '../errors.js';
import { ReplyFold } from '../parsers/collect.js';
import type { ParseResult } from '../parsers/types.js';
import type { RequestPart } from './run-request.js';
import type { FinishReason, StreamPart, TokenLogprobs, Usage } from './stream-parts.js';

export interface GenerateResult {
  readonly text: string;
  readonly tokenIds: number[];
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  /** Per generated token, when `logprobs` was asked for. */
  readonly logprobs?: TokenLogprobs[];
}

/** A chat reply: its parse (content, reasoning, tool calls, warnings) and the raw text. */
export interface ChatResult extends Readonly<ParseResult> {
  /** The raw generated text, reasoning and tool-call markup included. */
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly usage: Usage;
}

export async function foldGenerate(parts: AsyncIterable<RequestPart>): Promise<GenerateResult> {
  let text = '';
  const tokenIds: number[] = [];
  const logprobs: TokenLogprobs[] = [];
  for await (const part of parts) {
    if (part.type === 'raw') {
      text += part.text;
      tokenIds.push(...part.tokenIds);
      if (part.logprobs !== undefined) logprobs.push(...part.logprobs);
    } else if (part.type === 'finish') {
      return { text, tokenIds, finishReason: part.finishReason, usage: part.usage, ...(logprobs.length > 0 && { logprobs }) };
    }
  }
  throw new EngineError('the request ended without a finish');
}

export async function foldChat(parts: AsyncIterable<RequestPart>): Promise<ChatResult> {
  let text = '';
  const fold = new ReplyFold();
  for await (const part of parts) {
    switch (part.type) {
      case 'raw':
        text += part.text;
        break;
      case 'text-delta':
        fold.addContent(part.text);
        break;
      case 'reasoning-delta':
        fold.addReasoning(part.text);
        break;
      case 'tool-call':
        fold.addCall(part.index, { id: part.id, name: part.name, arguments: part.arguments });
        break;
      case 'finish':
        return { ...fold.result(), warnings: [...(part.warnings ?? [])], text, finishReason: part.finishReason, usage: part.usage };
    }
  }
  throw new EngineError('the request ended without a finish');
}

/** The public parts: raw parts become `token` parts when `withTokens` (logprobs were asked for), else are left out. */
export async function* streamParts(parts: AsyncIterable<RequestPart>, withTokens: boolean): AsyncGenerator<StreamPart> {
  for await (const part of parts) {
    if (part.type !== 'raw') yield part;
    else if (withTokens && part.tokenIds.length > 0) {
      yield { type: 'token', tokenIds: part.tokenIds, ...(part.logprobs !== undefined && part.logprobs.length > 0 && { logprobs: part.logprobs }) };
    }
  }
}
