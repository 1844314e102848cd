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
  /** With n > 1: the prompt counted once, the completion tokens of every choice. */
  readonly usage: Usage;
  /** Per generated token, when `logprobs` was asked for. */
  readonly logprobs?: TokenLogprobs[];
  /** With n > 1 only: every choice, in index order (the fields above are choice 0's). */
  readonly choices?: GenerateChoice[];
}

/** One of a request's n choices (n > 1): its own text, tokens, finish and usage. */
export interface GenerateChoice extends Omit<GenerateResult, 'choices'> {
  readonly index: number;
}

/** A chat reply: its parse (content, reasoning, tool calls, warnings) and the raw text. */
export interface ChatResult extends Readonly<ParseResult> {
  /** The raw generated text, reasoning and tool-call markup included. */
  readonly text: string;
  readonly finishReason: FinishReason;
  /** With n > 1: the prompt counted once, the completion tokens of every choice. */
  readonly usage: Usage;
  /** With n > 1 only: every choice, in index order (the fields above are choice 0's). */
  readonly choices?: ChatChoice[];
}

/** One of a chat's n choices (n > 1). */
export interface ChatChoice extends Omit<ChatResult, 'choices'> {
  readonly index: number;
}

/** One choice's fold in progress: `add` each of its parts, `result` once its finish part came. */
interface ChoiceFold<R> {
  add(part: RequestPart): void;
  result(): R | undefined;
}

/**
 * Folds a run's parts choice by choice (the `choice` index; none: choice 0)
 * to the end of the stream. One choice: its result. Several: choice 0's
 * result with every choice in `choices` and the usage summed (`total`).
 */
async function foldChoices<R extends { readonly usage: Usage }>(
  parts: AsyncIterable<RequestPart>,
  newFold: () => ChoiceFold<R>,
): Promise<R & { readonly choices?: (R & { readonly index: number })[] }> {
  const folds: ChoiceFold<R>[] = [];
  let tagged = false;
  for await (const part of parts) {
    tagged ||= part.choice !== undefined;
    const index = part.choice ?? 0;
    (folds[index] ??= newFold()).add(part);
  }
  const results = Array.from({ length: folds.length }, (_, i) => folds[i]?.result());
  if (results.length === 0 || results.some((result) => result === undefined)) throw new EngineError('the request ended without a finish');
  const done = results as R[];
  if (!tagged) return done[0]!;
  return { ...done[0]!, usage: totalUsage(done.map((result) => result.usage)), choices: done.map((result, index) => ({ ...result, index })) };
}

/** A request's usage over its choices: the prompt once (it is computed once), every choice's completion. */
export function totalUsage(usages: readonly Usage[]): Usage {
  const first = usages[0]!;
  const speculative = usages.filter((usage) => usage.speculative !== undefined).map((usage) => usage.speculative!);
  return {
    promptTokens: first.promptTokens,
    completionTokens: usages.reduce((sum, usage) => sum + usage.completionTokens, 0),
    cachedPromptTokens: first.cachedPromptTokens,
    ...(speculative.length > 0 && {
      speculative: { drafted: speculative.reduce((sum, s) => sum + s.drafted, 0), accepted: speculative.reduce((sum, s) => sum + s.accepted, 0) },
    }),
  };
}

export function foldGenerate(parts: AsyncIterable<RequestPart>): Promise<GenerateResult> {
  return foldChoices<Omit<GenerateResult, 'choices'>>(parts, () => {
    let text = '';
    const tokenIds: number[] = [];
    const logprobs: TokenLogprobs[] = [];
    let finished: Omit<GenerateResult, 'choices'> | undefined;
    return {
      add(part) {
        if (part.type === 'raw') {
          text += part.text;
          tokenIds.push(...part.tokenIds);
          if (part.logprobs !== undefined) logprobs.push(...part.logprobs);
        } else if (part.type === 'finish') {
          finished = { text, tokenIds, finishReason: part.finishReason, usage: part.usage, ...(logprobs.length > 0 && { logprobs }) };
        }
      },
      result: () => finished,
    };
  });
}

export function foldChat(parts: AsyncIterable<RequestPart>): Promise<ChatResult> {
  return foldChoices<Omit<ChatResult, 'choices'>>(parts, () => {
    let text = '';
    const fold = new ReplyFold();
    let finished: Omit<ChatResult, 'choices'> | undefined;
    return {
      add(part) {
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
            finished = { ...fold.result(), warnings: [...(part.warnings ?? [])], text, finishReason: part.finishReason, usage: part.usage };
        }
      },
      result: () => finished,
    };
  });
}

/** The public parts: raw parts become `token` parts when `withTokens` (logprobs were asked for), else are left out. */
export async function* streamParts(parts: AsyncIterable<RequestPart>, withTokens: boolean): AsyncGenerator<StreamPart> {
  for await (const part of parts) {
    if (part.type !== 'raw') yield part;
    else if (withTokens && part.tokenIds.length > 0) {
      yield {
        type: 'token',
        tokenIds: part.tokenIds,
        ...(part.logprobs !== undefined && part.logprobs.length > 0 && { logprobs: part.logprobs }),
        ...(part.choice !== undefined && { choice: part.choice }),
      };
    }
  }
}
