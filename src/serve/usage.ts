/** weft's usage and finish reasons in the OpenAI shape. */

import type { FinishReason, TokenLogprobs, Usage } from '../pipeline/stream-parts.js';

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

export function toOpenAiUsage(usage: Usage): OpenAiUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens },
  };
}

/** Finished streams end with stop, length or tool_calls; aborts and errors are thrown instead. */
export function toOpenAiFinishReason(reason: FinishReason): 'stop' | 'length' | 'tool_calls' {
  return reason === 'length' ? 'length' : reason === 'tool_calls' ? 'tool_calls' : 'stop';
}

/** A token's text as logprobs show it: its own decoded text, special tokens included. */
export type TokenText = (tokenId: number) => string;

export interface OpenAiTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

/** Chat logprobs (`choices[].logprobs.content`); `top` alternatives per token. */
export function toChatLogprobs(tokens: readonly TokenLogprobs[], top: number, text: TokenText): OpenAiTokenLogprob[] {
  return tokens.map((t) => {
    const token = text(t.token);
    return {
      token,
      logprob: t.logprob,
      bytes: [...Buffer.from(token, 'utf8')],
      top_logprobs: t.topLogprobs.slice(0, top).map((alt) => {
        const altToken = text(alt.token);
        return { token: altToken, logprob: alt.logprob, bytes: [...Buffer.from(altToken, 'utf8')] };
      }),
    };
  });
}

export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
}

/** Legacy completions logprobs; `offset` is where these tokens' text starts in the choice's text. */
export function toCompletionLogprobs(tokens: readonly TokenLogprobs[], top: number, text: TokenText, offset: number): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let at = offset;
  for (const t of tokens) {
    const token = text(t.token);
    out.tokens.push(token);
    out.token_logprobs.push(t.logprob);
    out.top_logprobs.push(Object.fromEntries(t.topLogprobs.slice(0, top).map((alt) => [text(alt.token), alt.logprob])));
    out.text_offset.push(at);
    at += token.length;
  }
  return out;
}
