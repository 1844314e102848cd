/**
 * One request's run: its engine spec, its submission, and the parts it makes,
 * from the engine's deltas through its reply's parsers to one finish part.
 * Aborts, closing and failures reject with a typed error; leaving early
 * (break, return, throw in the consumer) aborts the request.
 */

import type { Engine } from '../engine/engine.js';
import type { RequestSpec } from '../engine/request.js';
import type { GrammarSource } from '../guided/grammar.js';
import { AbortError, BackendError, PipelineClosedError, PromptTooLongError, WeftError } from '../errors.js';
import type { SampledToken } from '../sampling/sampler.js';
import type { ResolvedRequestOptions } from './options.js';
import type { PreparedPrompt } from './prompt.js';
import type { Reply } from './reply.js';
import { onSignalAbort } from './abort-fanout.js';
import { mergeChoices } from './merge-choices.js';
import { RequestChannel } from './request-channel.js';
import type { FinishReason, StreamPart, TokenLogprobs, Usage } from './stream-parts.js';

/**
 * The raw text and token ids behind each delta, before parsing: generate() and
 * chat() fold them into `text` and `tokenIds`; stream() shows them as `token`
 * parts when the request asked for logprobs, and drops them otherwise.
 */
export interface RawPart {
  readonly type: 'raw';
  readonly text: string;
  readonly tokenIds: readonly number[];
  readonly logprobs?: readonly TokenLogprobs[];
  /** n > 1: the choice it belongs to (StreamPart's `choice`). */
  readonly choice?: number;
}

/** Everything a run yields: the public stream parts and the raw ones. */
export type RequestPart = StreamPart | RawPart;

/** What a run needs of its pipeline. */
export interface RunContext {
  readonly engine: Engine;
  readonly maxContextLength: number;
  /** generation_config's max_length: caps prompt + output, like the model's context. */
  readonly maxLength: number | undefined;
  isClosed(): boolean;
  onStart(requestId: number, promptTokens: number): void;
  onTokens(count: number): void;
  /** The request's first generated tokens reached its consumer. */
  onFirstToken(requestId: number): void;
  /** With the reason the caller sees ('tool_calls' included), or 'aborted' / 'error' just before the rejection. */
  onFinish(requestId: number, finishReason: FinishReason, usage: Usage): void;
}

/**
 * A request's parts. With resolved.n > 1, the n choices' parts merged, each
 * tagged with its choice (merge-choices.ts); `newReply` makes each choice's
 * reply parsers.
 */
export async function* runRequest(
  ctx: RunContext,
  prepared: PreparedPrompt,
  resolved: ResolvedRequestOptions,
  newReply: () => Reply,
  signal: AbortSignal | undefined,
  grammar?: GrammarSource,
): AsyncGenerator<RequestPart> {
  if (ctx.isClosed()) throw new PipelineClosedError();
  if (signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: signal.reason });
  const spec = requestSpec(ctx, prepared, resolved, grammar);
  const channels = Array.from({ length: resolved.n }, () => new RequestChannel());
  const added = resolved.n === 1 ? ctx.engine.add(spec, channels[0]!) : ctx.engine.addChoices(spec, channels);
  if (!added.ok) {
    if (added.error.kind === 'Closed') throw new PipelineClosedError();
    throw new PromptTooLongError(added.error.message);
  }
  const promptTokens = prepared.promptTokenIds.length;
  if (typeof added.value === 'number') {
    yield* choiceParts(ctx, added.value, channels[0]!, promptTokens, newReply(), signal);
    return;
  }
  const ids = added.value;
  const runs = ids.map((id, i) => choiceParts(ctx, id, channels[i]!, promptTokens, newReply(), signal));
  yield* mergeChoices(runs, () => {
    for (const id of ids) ctx.engine.abort(id, new AbortError('another choice of the request failed, or its consumer stopped reading'));
  });
}

/** One engine request's parts, from its deltas through its reply's parsers to one finish part. */
async function* choiceParts(
  ctx: RunContext,
  requestId: number,
  channel: RequestChannel,
  promptTokens: number,
  reply: Reply,
  signal: AbortSignal | undefined,
): AsyncGenerator<RequestPart> {
  const onAbort = (): void => ctx.engine.abort(requestId, new AbortError('the request was aborted', { cause: signal?.reason }));
  const unsubscribe = signal === undefined ? undefined : onSignalAbort(signal, onAbort);
  let completion = 0;
  // Every started request is reported finished exactly once, whichever way it ends.
  let reported = false;
  const finish = (reason: FinishReason, usage: Usage): void => {
    reported = true;
    ctx.onFinish(requestId, reason, usage);
  };
  try {
    ctx.onStart(requestId, promptTokens);
    for await (const item of channel) {
      if (item.kind === 'delta') {
        const { text, tokenIds, logprobs } = item.delta;
        if (completion === 0 && tokenIds.length > 0) ctx.onFirstToken(requestId);
        completion += tokenIds.length;
        ctx.onTokens(tokenIds.length);
        yield logprobs === undefined ? { type: 'raw', text, tokenIds } : { type: 'raw', text, tokenIds, logprobs: logprobs.map(toTokenLogprobs) };
        yield* reply.push(text, tokenIds);
        continue;
      }
      const { info } = item;
      const usage: Usage = {
        promptTokens,
        completionTokens: completion,
        cachedPromptTokens: info.cachedPromptTokens,
        ...(info.speculative !== undefined && { speculative: info.speculative }),
      };
      if (info.reason === 'aborted' || info.reason === 'error') {
        finish(info.reason, usage);
        if (info.reason === 'aborted') throw info.error instanceof WeftError ? info.error : new AbortError();
        throw info.error instanceof WeftError ? info.error : new BackendError(`the request failed: ${info.error?.message ?? 'unknown error'}`, { cause: info.error });
      }
      if (info.finalText.length > 0) yield { type: 'raw', text: info.finalText, tokenIds: [] };
      yield* reply.push(info.finalText, []);
      yield* reply.end();
      // A reply that ended normally after its tool calls finishes with 'tool_calls'.
      const finishReason: FinishReason = reply.hasToolCalls && info.reason === 'stop' ? 'tool_calls' : info.reason;
      finish(finishReason, usage);
      const warnings = reply.warnings;
      yield { type: 'finish', finishReason, usage, ...(warnings.length > 0 && { warnings: [...warnings] }) };
      return;
    }
  } finally {
    unsubscribe?.();
    // A consumer that leaves early (break, return, throw) cancels the request,
    // and it counts as aborted then, even if its end was already queued unread.
    if (!channel.isFinished) ctx.engine.abort(requestId, new AbortError('the consumer stopped reading'));
    if (!reported) finish('aborted', { promptTokens, completionTokens: completion, cachedPromptTokens: 0 });
  }
}

/** The engine's view of the request. Without maxTokens it may run to the end of the context. */
function requestSpec(ctx: RunContext, prepared: PreparedPrompt, resolved: ResolvedRequestOptions, grammar: GrammarSource | undefined): RequestSpec {
  const limit = Math.min(ctx.maxContextLength, ctx.maxLength ?? Infinity);
  const room = Math.max(1, limit - prepared.promptTokenIds.length);
  return {
    promptTokenIds: prepared.promptTokenIds,
    sampling: resolved.sampling,
    stop: {
      maxTokens: resolved.maxTokens ?? room,
      stopTokenIds: resolved.stopTokenIds,
      stopStrings: resolved.stopStrings,
      ignoreEos: resolved.ignoreEos,
    },
    priority: resolved.priority,
    ...(resolved.skipSpecialTokens !== undefined && { skipSpecialTokens: resolved.skipSpecialTokens }),
    ...(grammar !== undefined && { grammar }),
    ...(resolved.speculative !== undefined && resolved.speculative !== false && { speculative: resolved.speculative }),
  };
}

function toTokenLogprobs(sampled: SampledToken): TokenLogprobs {
  return { token: sampled.token, logprob: sampled.logprob ?? 0, topLogprobs: sampled.topLogprobs ?? [] };
}
