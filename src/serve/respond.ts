/**
 * Sends JSON responses and errors. An error that arrives after a stream has
 * started cannot change the status any more: it goes out as an SSE event.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from './errors.js';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Answers with an OpenAI-shaped error. `closeConnection` when the request's
 * body was not read to its end (too large, too slow): the connection is
 * unusable then, so it is closed once the answer is out.
 */
export function sendError(req: IncomingMessage, res: ServerResponse, error: ApiError, closeConnection = false): void {
  if (closeConnection) {
    res.once('finish', () => req.socket.destroySoon());
    sendJson(res, error.status, error.body(), { connection: 'close' });
  } else {
    sendJson(res, error.status, error.body());
  }
}
