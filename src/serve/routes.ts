/**
 * The HTTP routes of `weft serve`. OpenAI's paths live under /v1; OVMS's /v3
 * prefix is accepted too, so clients of either work unchanged.
 *
 *   POST /v1/chat/completions   GET /v1/models   GET /health
 *   POST /v1/completions        GET /metrics
 *   POST /v1/embeddings
 *   POST /v1/rerank (also /rerank, as vLLM and llama.cpp's server answer it)
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelPipeline } from '../pipeline/face.js';
import type { ParserOptions } from '../pipeline/options.js';
import type { StreamPart } from '../pipeline/stream-parts.js';
import type { PipelineMetrics } from '../metrics/pipeline-metrics.js';
import { readJsonBody, type BodyLimits } from './body.js';
import { ChatChunker, ChatReply, type ResponseIds } from './chat-response.js';
import { parseChatRequest } from './chat-request.js';
import { CompletionChunker, CompletionReply } from './completion-response.js';
import { parseCompletionRequest } from './completion-request.js';
import { embeddingsResponse, parseEmbeddingsRequest } from './embeddings.js';
import { parseRerankRequest, rerankApiError, rerankResponse } from './rerank.js';
import { ApiError, toApiError } from './errors.js';
import { runGeneration, type Shape } from './generation.js';
import { PROMETHEUS_CONTENT_TYPE, toPrometheusText } from './metrics-text.js';
import { sendError, sendJson } from './respond.js';
import type { TokenText } from './usage.js';

export interface RouteContext {
  readonly pipeline: ModelPipeline;
  readonly modelName: string;
  /** Parsers for chat replies (from the flags, or inferred from the chat template). */
  readonly parsers: ParserOptions;
  /** Tool-guided auto for chats with tools (docs/guided.md). */
  readonly guidedTools: boolean;
  readonly metrics: PipelineMetrics;
  readonly limits: BodyLimits;
  readonly apiKey: string | undefined;
  readonly created: number;
  /** True once shutdown began: new generations are refused with 503. */
  readonly draining: () => boolean;
  /** Registers a generation's controller for the life of `run`, so shutdown can find it. */
  readonly track: (controller: AbortController, run: Promise<void>) => void;
}

/** Serves one HTTP request. Never rejects: every failure becomes an OpenAI-shaped answer. */
export async function handleRequest(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    await route(ctx, req, res);
  } catch (error) {
    const apiError = toApiError(error);
    // A body we stopped reading (too large, too slow) leaves the connection unusable.
    sendError(req, res, apiError, apiError.status === 413 || apiError.status === 408);
  }
}

async function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
  const api = /^\/v[13]\/(.*)$/.exec(path)?.[1];
  if (path === '/health') return only(req, 'GET', () => sendJson(res, ctx.draining() ? 503 : 200, { status: ctx.draining() ? 'shutting down' : 'ok' }));
  if (path === '/metrics') {
    return only(req, 'GET', () => {
      const text = toPrometheusText(ctx.metrics.snapshot(), ctx.modelName);
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  }
  if (path === '/rerank') {
    authorize(ctx, req);
    return only(req, 'POST', () => rerank(ctx, req, res));
  }
  if (api === undefined) throw new ApiError(404, 'not_found_error', `no route ${req.method} ${path}`, null, 'unknown_route');
  authorize(ctx, req);
  switch (api) {
    case 'models':
      return only(req, 'GET', () =>
        sendJson(res, 200, { object: 'list', data: [{ id: ctx.modelName, object: 'model', created: ctx.created, owned_by: 'weft' }] }),
      );
    case 'chat/completions':
      return only(req, 'POST', () => chatCompletions(ctx, req, res));
    case 'completions':
      return only(req, 'POST', () => completions(ctx, req, res));
    case 'embeddings':
      return only(req, 'POST', () => embeddings(ctx, req, res));
    case 'rerank':
      return only(req, 'POST', () => rerank(ctx, req, res));
    default:
      throw new ApiError(404, 'not_found_error', `no route ${req.method} ${path}`, null, 'unknown_route');
  }
}

async function chatCompletions(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = parseChatRequest(await readJsonBody(req, ctx.limits), { name: ctx.modelName, toolParser: ctx.parsers.tool, guidedTools: ctx.guidedTools });
  const ids = responseIds(ctx, 'chatcmpl');
  const text = tokenText(ctx.pipeline);
  await generate(ctx, req, res, (signal) => ctx.pipeline.stream(request.messages, { ...request.options, parsers: ctx.parsers, signal }), request.stream
    ? { stream: true, chunker: new ChatChunker(ids, request.topLogprobs, text, request.options.n ?? 1), includeUsage: request.includeUsage }
    : { stream: false, collector: new ChatReply(ids, request.topLogprobs, text) });
}

async function completions(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = parseCompletionRequest(await readJsonBody(req, ctx.limits), { name: ctx.modelName });
  const ids = responseIds(ctx, 'cmpl');
  const text = tokenText(ctx.pipeline);
  const echo = request.echo ? (typeof request.prompt === 'string' ? request.prompt : ctx.pipeline.tokenizer.decode(request.prompt)) : '';
  await generate(ctx, req, res, (signal) => ctx.pipeline.stream(request.prompt, { ...request.options, signal }), request.stream
    ? { stream: true, chunker: new CompletionChunker(ids, request.logprobs, text), includeUsage: request.includeUsage }
    : { stream: false, collector: new CompletionReply(ids, request.logprobs, text, echo) });
}

async function embeddings(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = parseEmbeddingsRequest(await readJsonBody(req, ctx.limits), { name: ctx.modelName });
  await answerCall(ctx, res, (signal) => ctx.pipeline.embed(request.input, { ...request.options, signal }), (result) => embeddingsResponse(result, ctx.modelName, request.base64));
}

async function rerank(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = parseRerankRequest(await readJsonBody(req, ctx.limits), { name: ctx.modelName });
  const start = (signal: AbortSignal) => ctx.pipeline.rerank(request.query, request.documents, { ...request.options, signal }).catch((error: unknown) => Promise.reject(rerankApiError(error)));
  await answerCall(ctx, res, start, (result) => rerankResponse(result, request, ctx.modelName));
}

/** One embed() or rerank() call answered as one JSON body; a client that goes away cancels it. */
async function answerCall<T>(ctx: RouteContext, res: ServerResponse, start: (signal: AbortSignal) => Promise<T>, answer: (result: T) => object): Promise<void> {
  if (ctx.draining()) throw new ApiError(503, 'service_unavailable', 'the server is shutting down', null, 'shutting_down');
  const controller = new AbortController();
  const onClose = (): void => {
    if (!res.writableEnded) controller.abort();
  };
  res.once('close', onClose);
  const run = start(controller.signal);
  ctx.track(controller, run.then(() => {}, () => {}));
  try {
    sendJson(res, 200, answer(await run));
  } finally {
    res.off('close', onClose);
  }
}

async function generate(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  start: (signal: AbortSignal) => AsyncIterable<StreamPart>,
  shape: Shape,
): Promise<void> {
  if (ctx.draining()) throw new ApiError(503, 'service_unavailable', 'the server is shutting down', null, 'shutting_down');
  const controller = new AbortController();
  const run = runGeneration(req, res, controller, start, shape);
  ctx.track(controller, run);
  await run;
}

function only(req: IncomingMessage, method: 'GET' | 'POST', handler: () => void | Promise<void>): void | Promise<void> {
  if (req.method !== method) throw new ApiError(405, 'invalid_request_error', `use ${method} here`, null, 'method_not_allowed');
  return handler();
}

/** With --api-key set, /v1 routes need `Authorization: Bearer <key>` (compared in constant time). */
function authorize(ctx: RouteContext, req: IncomingMessage): void {
  if (ctx.apiKey === undefined) return;
  const given = Buffer.from(req.headers.authorization ?? '');
  const expected = Buffer.from(`Bearer ${ctx.apiKey}`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ApiError(401, 'authentication_error', 'a valid API key is required: Authorization: Bearer <key>', null, 'invalid_api_key');
  }
}

function responseIds(ctx: RouteContext, prefix: string): ResponseIds {
  return { id: `${prefix}-${randomBytes(12).toString('hex')}`, created: Math.floor(Date.now() / 1000), model: ctx.modelName };
}

function tokenText(pipeline: ModelPipeline): TokenText {
  return (id) => pipeline.tokenizer.decode([id], { skipSpecialTokens: false });
}
