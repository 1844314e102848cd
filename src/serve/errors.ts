/**
 * Errors in the OpenAI shape: `{ "error": { message, type, param, code } }`
 * with the HTTP status a client expects. Every failure a route meets becomes
 * an ApiError here, so no error reaches node:http unshaped.
 */

import { WeftError } from '../errors.js';
import { fieldOfOption } from '../pipeline/openai-fields.js';

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
