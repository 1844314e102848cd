/**
 * The typed parts stream() yields, and the finish reasons and usage a request
 * reports. The part names are weft's own: they resemble the Vercel AI SDK's
 * (LanguageModelV2StreamPart) but are not the same, so an adapter maps them:
 *
 * | weft                                   | AI SDK                                                    |
 * |----------------------------------------|-----------------------------------------------------------|
 * | `text-delta` `{ text }`                | `text-start`, `text-delta` `{ id, delta }`, `text-end`    |
 * | `reasoning-delta` `{ text }`           | `reasoning-start`, `reasoning-delta` `{ id, delta }`, `reasoning-end` |
 * | `tool-call-start` `{ index, id, name }` | `tool-input-start` `{ id, toolName }`                    |
 * | `tool-call-delta` `{ index, argumentsDelta }` | `tool-input-delta` `{ id, delta }`                 |
 * | `tool-call` `{ index, id, name, arguments }` (an object) | `tool-input-end` `{ id }`, then `tool-call` `{ toolCallId, toolName, input }` (a JSON string) |
 * | `token` `{ tokenIds, logprobs? }`      | none (weft's own, only with `logprobs`)                   |
 * | `finish` `{ finishReason, usage }`     | `finish` `{ finishReason, usage }`                        |
 * | `usage.promptTokens`, `completionTokens`, `cachedPromptTokens` | `inputTokens`, `outputTokens`, `cachedInputTokens` |
 * | finish reason `tool_calls`             | `tool-calls`; `aborted` and `error` are thrown, not reported |
 */

import type { TokenLogprob } from '../sampling/sampler.js';

/**
 * Why a request ended: the engine's reasons (`stop`, `length`, `aborted`,
 * `error`; see engine/request.ts), plus `tool_calls` for a reply that ended
 * normally (`stop`) after the tool parser found calls in it.
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'aborted' | 'error';

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Prompt tokens served from the prefix cache at the last admission. */
  readonly cachedPromptTokens: number;
  /** Speculative decoding, for a request that used it: draft tokens verified, and accepted (docs/speculative.md). */
  readonly speculative?: { readonly drafted: number; readonly accepted: number };
}

/**
 * n > 1 (docs/parallel-sampling.md): every part of a request with several
 * choices names the choice it belongs to, 0 to n - 1; each choice ends with
 * its own `finish` part. Absent for a request of one choice.
 */
export interface ChoiceIndex {
  readonly choice?: number;
}

export type StreamPart = ChoicePart & ChoiceIndex;

/** The parts of one choice. */
export type ChoicePart =
  /** Answer text (outside reasoning and tool calls). */
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  /** A tool call began; `index` counts the reply's calls from 0, `id` is unique across requests. */
  | { readonly type: 'tool-call-start'; readonly index: number; readonly id: string; readonly name: string }
  /** A piece of the call's arguments as JSON text; a call's pieces concatenate to its arguments. */
  | { readonly type: 'tool-call-delta'; readonly index: number; readonly argumentsDelta: string }
  /** The finished call, with its arguments parsed. */
  | {
      readonly type: 'tool-call';
      readonly index: number;
      readonly id: string;
      readonly name: string;
      readonly arguments: Record<string, unknown>;
    }
  /** The token ids generated (and their log probabilities); only when the request set `logprobs`. */
  | { readonly type: 'token'; readonly tokenIds: readonly number[]; readonly logprobs?: readonly TokenLogprobs[] }
  /** Always the last part. `warnings`: what the parsers found malformed, if anything. */
  | { readonly type: 'finish'; readonly finishReason: FinishReason; readonly usage: Usage; readonly warnings?: readonly string[] };

export interface TokenLogprobs {
  readonly token: number;
  readonly logprob: number;
  readonly topLogprobs: readonly TokenLogprob[];
}
