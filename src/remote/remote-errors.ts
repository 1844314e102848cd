/**
 * An OpenAI-compatible server's error answer -> weft's typed errors, so code
 * written against an in-process Pipeline catches the same classes:
 * a bad field is InvalidOptionError (naming the field), an overlong prompt
 * PromptTooLongError, an unknown model InvalidOptionError('model'), a model
 * weft serve says cannot do it UnsupportedModelError, the rest
 * RemoteError with the HTTP status.
 */

import { InvalidOptionError, PromptTooLongError, RemoteError, UnsupportedModelError, type WeftError } from '../errors.js';

interface ErrorBody {
  message?: unknown;
  type?: unknown;
  param?: unknown;
  code?: unknown;
}

/** `body` is the parsed JSON of the answer, if it was JSON (OpenAI: `{ error: {...} }`; some servers: `{ message }`). */
export function remoteError(status: number | undefined, body: unknown): WeftError {
  const error = errorBody(body);
  const message = typeof error.message === 'string' && error.message !== '' ? error.message : `the server answered ${status ?? 'nothing'}`;
  const code = typeof error.code === 'string' ? error.code : undefined;
  const param = typeof error.param === 'string' ? error.param : undefined;
  if (code === 'context_length_exceeded' || /context length|too long|maximum context/i.test(message)) {
    if (status === undefined || status === 400) return new PromptTooLongError(message);
  }
  if (status === 404 && (code === 'model_not_found' || param === 'model' || /model/i.test(message))) return new InvalidOptionError('model', message);
  // weft serve's answer when its model cannot do what was asked (rerank() on a chat model).
  if (status === 400 && code === 'model_not_supported') return new UnsupportedModelError(message);
  if (status === 400 || status === 422) return new InvalidOptionError(param ?? 'request', message);
  return new RemoteError(`${status ?? 'no answer'}: ${message}`, status);
}

function errorBody(body: unknown): ErrorBody {
  if (body === null || typeof body !== 'object') return {};
  const error = (body as { error?: unknown }).error;
  if (error !== null && typeof error === 'object') return error as ErrorBody;
  if (typeof error === 'string') return { message: error };
  return body as ErrorBody;
}
