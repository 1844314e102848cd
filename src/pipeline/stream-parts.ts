/**
 * The typed parts stream() yields. Names follow the Vercel AI SDK's stream
 * parts, so an adapter is thin.
 */

import type { FinishReason } from '../engine/request.js';
import type { TokenLogprob } from '../sampling/sampler.js';

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Prompt tokens served from the prefix cache at the last admission. */
  readonly cachedPromptTokens: number;
}

export type StreamPart =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  | { readonly type: 'tool-call-start'; readonly index: number; readonly id: string; readonly name: string }
  | { readonly type: 'tool-call-delta'; readonly index: number; readonly argumentsDelta: string }
  | {
      readonly type: 'tool-call';
      readonly index: number;
      readonly id: string;
      readonly name: string;
      readonly arguments: Record<string, unknown>;
    }
  | { readonly type: 'token'; readonly tokenIds: readonly number[]; readonly logprobs?: readonly TokenLogprobs[] }
  | { readonly type: 'finish'; readonly finishReason: FinishReason; readonly usage: Usage; readonly warnings?: readonly string[] };

export interface TokenLogprobs {
  readonly token: number;
  readonly logprob: number;
  readonly topLogprobs: readonly TokenLogprob[];
}
