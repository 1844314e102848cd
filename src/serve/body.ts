/**
 * Reads a request's JSON body within a size limit and a deadline. A body that
 * is too big or never ends is refused without reading on: the caller answers
 * and closes the connection (its unread bytes make it unusable).
 */

import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest } from './errors.js';

export interface BodyLimits {
  /** Most bytes of body accepted. */
  readonly maxBytes: number;
  /** Most milliseconds to receive the whole body. */
  readonly timeoutMs: number;
}

export async function readJsonBody(req: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes) throw tooLarge(limits);
  const text = await readText(req, limits);
  if (text.trim() === '') throw badRequest('the request body is empty; expected a JSON object');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}

function readText(req: IncomingMessage, limits: BodyLimits): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: ApiError | undefined): void => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (error) {
        req.pause(); // read no more of it; the response closes the connection
        reject(error);
      } else {
        resolve(Buffer.concat(chunks).toString('utf8'));
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limits.maxBytes) done(tooLarge(limits));
      else chunks.push(chunk);
    };
    const onEnd = (): void => done(undefined);
    const onError = (): void => done(badRequest('the request body could not be read'));
    const onAborted = (): void => done(badRequest('the client aborted the request body'));
    const timer = setTimeout(
      () => done(new ApiError(408, 'invalid_request_error', `the request body did not arrive within ${limits.timeoutMs} ms`, null, 'request_timeout')),
      limits.timeoutMs,
    );
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

function tooLarge(limits: BodyLimits): ApiError {
  return new ApiError(413, 'invalid_request_error', `the request body is larger than ${limits.maxBytes} bytes`, null, 'request_too_large');
}
