/**
 * Errors in the OpenAI shape: `{ "error": { message, type, param, code } }`
 * with the HTTP status a client expects. Every failure a route meets becomes
 * an ApiError here, so no error reaches node:http unshaped.
 */

import { WeftError } from '../index.js';

export type ApiErrorType = 'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'server_error' | 'service_unavailable';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ApiErrorType,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  body(): { error: { message: string; type: ApiErrorType; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const badRequest = (message: string, param: string | null = null, code: string | null = null): ApiError =>
  new ApiError(400, 'invalid_request_error', message, param, code);

/** The weft option names a request field maps to, so a pipeline's complaint names the field the client sent. */
const FIELD_OF_OPTION: Record<string, string> = {
  maxTokens: 'max_tokens',
  topP: 'top_p',
  topK: 'top_k',
  minP: 'min_p',
  repetitionPenalty: 'repetition_penalty',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  stopTokenIds: 'stop_token_ids',
  ignoreEos: 'ignore_eos',
  logprobs: 'top_logprobs',
  skipSpecialTokens: 'skip_special_tokens',
  parallelToolCalls: 'parallel_tool_calls',
  prompt: 'prompt',
  messages: 'messages',
};

/** Guided options carry a path (`responseFormat.schema.properties.x.pattern`); the field keeps it in the client's spelling. */
const FIELD_OF_OPTION_PREFIX: readonly [string, string][] = [
  ['responseFormat.schema', 'response_format.json_schema.schema'],
  ['responseFormat', 'response_format'],
  ['toolChoice', 'tool_choice'],
];

function fieldOfOption(option: string): string {
  const exact = FIELD_OF_OPTION[option];
  if (exact !== undefined) return exact;
  for (const [prefix, field] of FIELD_OF_OPTION_PREFIX) {
    if (option === prefix || option.startsWith(`${prefix}.`) || option.startsWith(`${prefix}[`)) return field + option.slice(prefix.length);
  }
  return option;
}

/** Any thrown value as an ApiError; weft's typed errors keep their code. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof WeftError) {
    const code = error.code.toLowerCase();
    switch (error.code) {
      case 'INVALID_OPTION': {
        const option = (error as WeftError & { option?: string }).option;
        return badRequest(error.message, option === undefined ? null : fieldOfOption(option), code);
      }
      case 'PROMPT_TOO_LONG':
        return badRequest(error.message, 'messages', 'context_length_exceeded');
      case 'CHAT_TEMPLATE_ERROR':
      case 'TOKENIZER_ERROR':
        return badRequest(error.message, 'messages', code);
      // Only the server cancels a request whose client is still there: at shutdown.
      case 'ABORTED':
      case 'PIPELINE_CLOSED':
        return new ApiError(503, 'service_unavailable', 'the server is shutting down', null, code);
      default:
        return new ApiError(500, 'server_error', error.message, null, code);
    }
  }
  return new ApiError(500, 'server_error', 'internal error', null, null);
}
