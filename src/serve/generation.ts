/**
 * Runs one generation for an HTTP request and sends it, streamed or whole.
 *
 * Lifetime: the request's AbortController fires when the client goes (socket
 * closed, reset or timed out) or when the server gives up on it at shutdown;
 * either cancels this request in the pipeline and nothing else. The first part
 * is awaited before any byte is sent, so errors the pipeline finds at
 * admission (a prompt too long) still get their own status code.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { AbortError } from '../errors.js';
import { totalUsage } from '../pipeline/results.js';
import type { StreamPart, Usage } from '../pipeline/stream-parts.js';
import { toApiError } from './errors.js';
import { sendError, sendJson } from './respond.js';
import { SseWriter } from './sse.js';

/** Turns parts into the chunks of one endpoint's stream. */
export interface Chunker {
  opening?(): object;
  fromPart(part: StreamPart): object | undefined;
  closing(part: Extract<StreamPart, { type: 'finish' }>): object;
  usage(usage: Usage): object;
}

/** Collects parts into one endpoint's whole response. */
export interface Collector {
  add(part: StreamPart): void;
  completion(): object;
}

export type Shape = { readonly stream: true; readonly chunker: Chunker; readonly includeUsage: boolean } | { readonly stream: false; readonly collector: Collector };

export async function runGeneration(
  req: IncomingMessage,
  res: ServerResponse,
  controller: AbortController,
  start: (signal: AbortSignal) => AsyncIterable<StreamPart>,
  shape: Shape,
): Promise<void> {
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort(new AbortError('the client went away'));
  };
  res.once('close', onClose);
  let iterator: AsyncIterator<StreamPart> | undefined;
  try {
    iterator = start(controller.signal)[Symbol.asyncIterator]();
    let next = await iterator.next();
    if (!shape.stream) {
      for (; !next.done; next = await iterator.next()) shape.collector.add(next.value);
      sendJson(res, 200, shape.collector.completion());
      return;
    }
    const sse = new SseWriter(res);
    sse.start();
    if (shape.chunker.opening) await sse.send(shape.chunker.opening());
    try {
      // Each choice finishes on its own (n > 1); the usage chunk comes once, after all, with the prompt counted once.
      const usages: Usage[] = [];
      for (; !next.done && !sse.closed; next = await iterator.next()) {
        const part = next.value;
        if (part.type === 'finish') {
          await sse.send(shape.chunker.closing(part));
          usages.push(part.usage);
          continue;
        }
        const chunk = shape.chunker.fromPart(part);
        if (chunk !== undefined) await sse.send(chunk);
      }
      if (shape.includeUsage && usages.length > 0 && !sse.closed) await sse.send(shape.chunker.usage(totalUsage(usages)));
    } catch (error) {
      await sse.send(toApiError(error).body()); // dropped if the client is gone
    }
    await sse.end();
  } catch (error) {
    // Before the first byte: a proper status. A client that left gets nothing.
    if (!res.destroyed) sendError(req, res, toApiError(error));
  } finally {
    res.off('close', onClose);
    // Leaving early (client gone) cancels the request in the pipeline.
    await iterator?.return?.().catch(() => undefined);
  }
}
