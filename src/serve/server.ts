/**
 * The `weft serve` HTTP server around one Pipeline: start, serve, shut down.
 *
 * Plain node:http: the server has five routes, one of them a token stream whose
 * backpressure and client-disconnect handling must be exact; node:http exposes
 * both directly (res.write's return value, 'drain', 'close'), needs no
 * dependency, and a framework would add routing and plugins we do not use.
 *
 * Shutdown (close): stop accepting connections and refuse new generations
 * (503), let running ones finish until the deadline, then cancel the rest, and
 * close every connection. The pipeline belongs to the caller and stays open.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelPipeline } from '../pipeline/face.js';
import type { ParserOptions } from '../pipeline/options.js';
import { PipelineMetrics } from '../metrics/pipeline-metrics.js';
import { InvalidOptionError, PipelineClosedError } from '../errors.js';
import { GUIDED_TOOL_PARSERS, isGuidedToolParser } from '../tool-formats/registry.js';
import { handleRequest, type RouteContext } from './routes.js';

export interface ServerOptions {
  readonly pipeline: ModelPipeline;
  /** The name clients pass as `model`. */
  readonly modelName: string;
  /** Parsers for chat replies. Default: none (the text comes back as it is). */
  readonly parsers?: ParserOptions;
  /**
   * Chats with tools and tool_choice "auto" are tool-guided: a call the model starts is written in
   * the tool parser's syntax with valid arguments (OVMS's enable_tool_guided_generation). Needs a
   * tool parser with a grammar. Default false.
   */
  readonly guidedTools?: boolean;
  /** Default 127.0.0.1: only this machine. Use 0.0.0.0 to listen on every interface. */
  readonly host?: string;
  /** Default 8000; 0 picks a free port. */
  readonly port?: number;
  /** When set, /v1 routes require `Authorization: Bearer <apiKey>`. */
  readonly apiKey?: string;
  /** Most bytes of a request body. Default 16 MiB. */
  readonly maxBodyBytes?: number;
  /** Most milliseconds to receive a request body. Default 30 s. */
  readonly bodyTimeoutMs?: number;
  /** Metrics to report (default: new ones for `pipeline`). */
  readonly metrics?: PipelineMetrics;
}

export class WeftServer {
  readonly metrics: PipelineMetrics;
  private readonly inflight = new Map<AbortController, Promise<void>>();
  private draining = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly http: Server,
    metrics: PipelineMetrics,
    private readonly ownsMetrics: boolean,
  ) {
    this.metrics = metrics;
  }

  static async start(options: ServerOptions): Promise<WeftServer> {
    checkServerOptions(options);
    const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
    const toolParser = options.parsers?.tool;
    if (options.guidedTools === true && (toolParser === undefined || !isGuidedToolParser(toolParser))) {
      throw new InvalidOptionError('guidedTools', `tool-guided generation needs a tool parser with a grammar (${GUIDED_TOOL_PARSERS.join(', ')}); the tool parser is ${toolParser ?? 'none'}`);
    }
    const metrics = options.metrics ?? new PipelineMetrics(options.pipeline);
    const http = createServer({
      // A request (headers and body) must arrive within these; a response may stream for as long as it needs.
      headersTimeout: Math.min(60_000, bodyTimeoutMs + 1_000),
      requestTimeout: bodyTimeoutMs + 2_000,
    });
    const server = new WeftServer(http, metrics, options.metrics === undefined);
    const ctx: RouteContext = {
      pipeline: options.pipeline,
      modelName: options.modelName,
      parsers: options.parsers ?? {},
      guidedTools: options.guidedTools === true,
      metrics,
      limits: { maxBytes: options.maxBodyBytes ?? 16 * 1024 * 1024, timeoutMs: bodyTimeoutMs },
      apiKey: options.apiKey,
      created: Math.floor(Date.now() / 1000),
      draining: () => server.draining,
      track: (controller, run) => {
        server.inflight.set(controller, run);
        void run.finally(() => server.inflight.delete(controller));
      },
    };
    http.on('request', (req, res) => void handleRequest(ctx, req, res));
    // A broken client connection is that client's problem; log nothing, keep serving.
    http.on('clientError', (_error, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port ?? 8000, options.host ?? '127.0.0.1', () => {
        http.off('error', reject);
        server.address = http.address() as AddressInfo;
        resolve();
      });
    });
    return server;
  }

  /** Where it listens (kept after close, for messages). */
  private address: AddressInfo | undefined;

  get port(): number {
    return this.address!.port;
  }

  get host(): string {
    return this.address!.address;
  }

  /** e.g. http://127.0.0.1:8000 */
  get url(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${host}:${this.port}`;
  }

  /** Generations running now. */
  get activeRequests(): number {
    return this.inflight.size;
  }

  /** Stops serving: running generations get `deadlineMs` to finish, then are cancelled. Idempotent. */
  close(deadlineMs = 10_000): Promise<void> {
    this.closing ??= (async () => {
      this.draining = true;
      const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
      this.http.closeIdleConnections();
      const all = (): Promise<unknown> => Promise.allSettled([...this.inflight.values()]);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
      await Promise.race([all(), deadline]);
      clearTimeout(timer);
      for (const controller of this.inflight.keys()) controller.abort(new PipelineClosedError('the server shut down before the request finished'));
      await all();
      this.http.closeAllConnections();
      await closed;
      if (this.ownsMetrics) this.metrics.detach();
    })();
    return this.closing;
  }
}

const START_CALL = "WeftServer.start({ pipeline, modelName: 'weft-demo', port?, host?, parsers?, ... }), pipeline being a Pipeline you opened";
const SERVER_KEYS: readonly (keyof ServerOptions)[] = ['pipeline', 'modelName', 'parsers', 'guidedTools', 'host', 'port', 'apiKey', 'maxBodyBytes', 'bodyTimeoutMs', 'metrics'];

/** WeftServer.start's options, checked for shape: a wrong one is told the call, not left to a TypeError or a server that fails every request. */
function checkServerOptions(options: unknown): asserts options is ServerOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    const got = typeof options === 'string' ? `the string ${JSON.stringify(options)}` : options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
    throw new InvalidOptionError('options', `expected an object, got ${got}: ${START_CALL}`);
  }
  const record = options as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !(SERVER_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new InvalidOptionError(unknown[0]!, `not a WeftServer option (it takes ${SERVER_KEYS.join(', ')})`);
  const pipeline = record.pipeline as Partial<ModelPipeline> | undefined;
  if (pipeline === null || typeof pipeline !== 'object' || typeof pipeline.stream !== 'function' || typeof pipeline.chat !== 'function' || typeof pipeline.stats !== 'function') {
    const hint = typeof pipeline === 'string' || (pipeline !== null && typeof pipeline === 'object' && 'model' in pipeline)
      ? ': open it first, await Pipeline.create({ model }), or run `weft serve <folder>`'
      : '';
    throw new InvalidOptionError('pipeline', `expected a Pipeline (await Pipeline.create(...)), got ${typeof pipeline === 'string' ? `the string ${JSON.stringify(pipeline)}` : pipeline === null ? 'null' : typeof pipeline}${hint}`);
  }
  if (typeof record.modelName !== 'string' || record.modelName === '') throw new InvalidOptionError('modelName', 'expected the name clients pass as `model`, a non-empty string');
  for (const name of ['host', 'apiKey'] as const) {
    if (record[name] !== undefined && typeof record[name] !== 'string') throw new InvalidOptionError(name, 'expected a string');
  }
  if (record.port !== undefined && (!Number.isInteger(record.port) || (record.port as number) < 0 || (record.port as number) > 65535)) {
    throw new InvalidOptionError('port', `expected an integer in [0, 65535] (0 picks a free port), got ${JSON.stringify(record.port)}`);
  }
  for (const name of ['maxBodyBytes', 'bodyTimeoutMs'] as const) {
    if (record[name] !== undefined && (!Number.isInteger(record[name]) || (record[name] as number) < 1)) throw new InvalidOptionError(name, `expected a positive integer, got ${JSON.stringify(record[name])}`);
  }
  if (record.guidedTools !== undefined && typeof record.guidedTools !== 'boolean') throw new InvalidOptionError('guidedTools', 'expected true or false');
  if (record.parsers !== undefined && (record.parsers === null || typeof record.parsers !== 'object')) throw new InvalidOptionError('parsers', 'expected { tool?, reasoning? }');
  if (record.metrics !== undefined && typeof (record.metrics as Partial<PipelineMetrics> | null)?.snapshot !== 'function') throw new InvalidOptionError('metrics', 'expected a PipelineMetrics (new PipelineMetrics(pipeline))');
}
