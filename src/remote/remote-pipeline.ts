/**
 * RemotePipeline: weft's generate / chat / stream API, typed parts and
 * AbortSignal over any OpenAI-compatible server (vLLM, OpenVINO Model Server,
 * `weft serve` on another machine), for apps that outgrow one process.
 *
 * Same contract as Pipeline where a remote server allows it (generate, chat
 * and stream are PipelineFace's, over the parts of chunk-parts.ts): a request
 * starts when its stream is iterated, breaking out or aborting closes its HTTP
 * stream, errors are weft's typed errors (remote-errors.ts). Differences: no
 * token ids (`tokenIds` is empty, no `token` parts), and request options are
 * checked by the server, so a bad value rejects after a round trip.
 */

import { randomBytes } from 'node:crypto';
import { AbortError, InvalidOptionError, PipelineClosedError, RemoteError, WeftError } from '../errors.js';
import { createParserChain } from '../parsers/chain.js';
import { createReasoningParser } from '../parsers/registry.js';
import { createToolParser } from '../tool-formats/registry.js';
import type { ParserEvent, ParserStream } from '../parsers/types.js';
import { PipelineFace, type NoEvents, type PartRun } from '../pipeline/face.js';
import { normalizeMessages } from '../pipeline/messages.js';
import { MAX_CHOICES, type ChatOptions, type ParserOptions } from '../pipeline/options.js';
import { integer } from '../pipeline/option-values.js';
import type { RequestPart } from '../pipeline/run-request.js';
import type { ToolDefinition } from '../text/types.js';
import type { EmbedInput, EmbedOptions, EmbedResult } from '../embeddings/embed.js';
import type { RerankOptions, RerankResult } from '../embeddings/rerank.js';
import { rerankResultOf } from './rerank-answer.js';
import { ChoiceReaders, ChunkReader } from './chunk-parts.js';
import { remoteError } from './remote-errors.js';
import { chatBody, completionBody } from './request-body.js';
import { sseData } from './sse-reader.js';

export interface RemoteOptions {
  /** The server's OpenAI base URL, e.g. "http://gpu-box:8000/v1" (OVMS: ".../v3"). */
  baseURL: string;
  /** The served model's name, sent as `model`. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Extra HTTP headers for every request. */
  headers?: Record<string, string>;
  /**
   * Parsers to run here on the text the server sends, for servers that do not
   * parse reasoning or tool calls themselves. Leave out when the server does
   * (it then sends `reasoning_content` and `tool_calls`, which come through as they are).
   */
  parsers?: ParserOptions;
  /** The server's chat template opens a think block itself, so replies start inside reasoning (local parsing only). */
  startsInReasoning?: boolean;
  /** Check at create() that the server answers and serves `model` (GET /models). Default true. */
  checkModel?: boolean;
}

export class RemotePipeline extends PipelineFace<NoEvents> {
  readonly model: string;
  private readonly baseURL: string;
  private readonly closer = new AbortController();

  private constructor(private readonly options: RemoteOptions) {
    super();
    this.model = options.model;
    this.baseURL = options.baseURL.replace(/\/+$/, '');
  }

  /** Connects to `remote.baseURL` (and checks it serves `remote.model`, unless told not to). */
  static async create(options: { remote: RemoteOptions }): Promise<RemotePipeline> {
    const remote = checkCreateShape(options);
    if (typeof remote.baseURL !== 'string' || !/^https?:\/\//.test(remote.baseURL)) {
      throw new InvalidOptionError('remote.baseURL', `expected an http(s) URL, got ${JSON.stringify(remote.baseURL)}`);
    }
    if (typeof remote.model !== 'string' || remote.model === '') throw new InvalidOptionError('remote.model', 'expected the served model\'s name');
    for (const name of ['tool', 'reasoning'] as const) {
      const parser = remote.parsers?.[name];
      // Creating one checks the name (the registry throws InvalidOptionError for unknown ones).
      if (parser !== undefined) (name === 'tool' ? createToolParser : createReasoningParser)(parser);
    }
    const pipe = new RemotePipeline(remote);
    if (remote.checkModel !== false) await pipe.checkModel();
    return pipe;
  }

  /** Cancels every running request (PipelineClosedError); later calls throw it at once. Idempotent. */
  override async close(): Promise<void> {
    this.closer.abort(new PipelineClosedError('the remote pipeline was closed while the request ran'));
  }

  /**
   * POST /embeddings: the vectors the server computes (sent as base64 float32).
   * weft serve also takes prompt_name, prompt, normalize and truncate; other
   * servers may refuse those fields, so they are sent only when given.
   */
  async embed(input: EmbedInput, options: EmbedOptions = {}): Promise<EmbedResult> {
    if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
    if (this.closer.signal.aborted) throw new PipelineClosedError();
    const { signal, dimensions, promptName, prompt, normalize, truncate, priority: _priority } = options;
    if (signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: signal.reason });
    const body = {
      model: this.model,
      input,
      encoding_format: 'base64',
      ...(dimensions !== undefined && { dimensions }),
      ...(promptName !== undefined && { prompt_name: promptName }),
      ...(prompt !== undefined && { prompt }),
      ...(normalize !== undefined && { normalize }),
      ...(truncate !== undefined && { truncate }),
    };
    try {
      const response = await this.post('/embeddings', body, AbortSignal.any([this.closer.signal, ...(signal ? [signal] : [])]));
      return embeddingsOf(await jsonOf(response));
    } catch (error) {
      throw this.typed(error, signal);
    }
  }

  /**
   * POST /rerank (vLLM's, llama.cpp's and weft serve's shape): every
   * document's score, ranked here. top_n is not sent, so `scores` has them
   * all; weft serve's instruction and truncate are sent only when given.
   */
  async rerank(query: string, documents: readonly string[], options: RerankOptions = {}): Promise<RerankResult> {
    if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
    if (this.closer.signal.aborted) throw new PipelineClosedError();
    const { signal, topN, instruction, truncate, priority: _priority } = options;
    if (!Array.isArray(documents)) throw new InvalidOptionError('documents', 'expected an array of strings');
    if (topN !== undefined && (!Number.isSafeInteger(topN) || topN < 1)) throw new InvalidOptionError('topN', `must be a positive integer, got ${String(topN)}`);
    if (signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: signal.reason });
    const body = {
      model: this.model,
      query,
      documents,
      ...(instruction !== undefined && { instruction }),
      ...(truncate !== undefined && { truncate }),
    };
    try {
      const response = await this.post('/rerank', body, AbortSignal.any([this.closer.signal, ...(signal ? [signal] : [])]));
      return rerankResultOf(await jsonOf(response), documents.length, topN);
    } catch (error) {
      throw this.typed(error, signal);
    }
  }

  /** Checks what can be checked here (the server checks the rest); the HTTP request starts when the run is read. */
  protected override request(input: unknown, options: ChatOptions, chat: boolean): PartRun {
    if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new InvalidOptionError('signal', 'expected an AbortSignal');
    if (options.guidedTools === true) throw new InvalidOptionError('guidedTools', 'the server decides it (weft serve --enable-tool-guided-generation); a request cannot ask');
    if (!chat && typeof input !== 'string' && !(Array.isArray(input) && input.every((id) => Number.isInteger(id)))) {
      throw new InvalidOptionError('prompt', 'expected a string, token ids, or an array of { role, content }');
    }
    const { signal, parsers, ...rest } = options;
    const body = chat ? chatBody(this.model, normalizeMessages(input), rest) : completionBody(this.model, input as string | readonly number[], rest);
    const path = chat ? '/chat/completions' : '/completions';
    const names = { ...this.options.parsers, ...parsers };
    // n > 1: a reader per choice (their parts tagged with it); the server checks the rest of n's rules.
    const n = integer('n', options.n, 1, { min: 1, max: MAX_CHOICES });
    const newReader = (choice: number): ChunkReader => new ChunkReader(chat, chat ? this.localParser(names, options.tools ?? []) : undefined, choice);
    return () => this.run(path, body, n === 1 ? newReader(0) : new ChoiceReaders(n, newReader), signal);
  }

  private async *run(path: string, body: object, reader: ChunkReader | ChoiceReaders, signal: AbortSignal | undefined): AsyncGenerator<RequestPart> {
    if (this.closer.signal.aborted) throw new PipelineClosedError();
    if (signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: signal.reason });
    const mine = new AbortController();
    const signals = [this.closer.signal, mine.signal, ...(signal ? [signal] : [])];
    const combined = AbortSignal.any(signals);
    try {
      const response = await this.post(path, body, combined);
      for await (const data of sseData(response.body!)) {
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch {
          throw new RemoteError(`the server sent an event that is not JSON: ${data.slice(0, 200)}`);
        }
        yield* reader.push(chunk);
      }
      yield* reader.end();
    } catch (error) {
      throw this.typed(error, signal);
    } finally {
      // Leaving early (break, return, an error) closes the HTTP stream.
      mine.abort();
    }
  }

  private async post(path: string, body: object, signal: AbortSignal): Promise<Response> {
    const response = await fetch(`${this.baseURL}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...this.authHeaders() },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok || response.body === null) throw remoteError(response.status, await jsonOf(response));
    return response;
  }

  private async checkModel(): Promise<void> {
    let response: Response;
    try {
      response = await fetch(`${this.baseURL}/models`, { headers: this.authHeaders(), signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw this.typed(error, undefined);
    }
    // A server without a models list is given the benefit of the doubt.
    if (!response.ok) {
      if (response.status === 401 || response.status === 403) throw remoteError(response.status, await jsonOf(response));
      return;
    }
    const list = (await jsonOf(response)) as { data?: { id?: unknown }[] } | undefined;
    const ids = Array.isArray(list?.data) ? list.data.map((m) => m.id).filter((id): id is string => typeof id === 'string') : [];
    if (ids.length > 0 && !ids.includes(this.model)) {
      throw new InvalidOptionError('remote.model', `${JSON.stringify(this.model)} is not served at ${this.baseURL} (it serves ${ids.map((id) => JSON.stringify(id)).join(', ')})`);
    }
  }

  private authHeaders(): Record<string, string> {
    return { ...this.options.headers, ...(this.options.apiKey !== undefined && { authorization: `Bearer ${this.options.apiKey}` }) };
  }

  /** weft's parsers for servers that send raw text; undefined when none are named. */
  private localParser(names: ParserOptions, tools: readonly ToolDefinition[]): ParserStream<ParserEvent> | undefined {
    if (names.tool === undefined && names.reasoning === undefined) return undefined;
    const prefix = `call_${randomBytes(6).toString('hex')}_`;
    return createParserChain({
      reasoning: names.reasoning === undefined ? null : createReasoningParser(names.reasoning, { startsInReasoning: this.options.startsInReasoning === true }),
      tool: names.tool === undefined ? null : createToolParser(names.tool, { tools, generateId: (index: number) => `${prefix}${index}` }),
    }).stream();
  }

  /** Any failure as a weft error: aborts and closing first, then network failures. */
  private typed(error: unknown, signal: AbortSignal | undefined): WeftError {
    if (this.closer.signal.aborted) return this.closer.signal.reason instanceof WeftError ? this.closer.signal.reason : new PipelineClosedError();
    if (signal?.aborted) return new AbortError('the request was aborted', { cause: signal.reason });
    if (error instanceof WeftError) return error;
    const cause = (error as { cause?: { message?: string; code?: string } }).cause;
    return new RemoteError(`could not reach ${this.baseURL}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, undefined, { cause: error });
  }
}

/** An OpenAI embeddings answer (vectors as float arrays or base64 float32) as weft's result. */
function embeddingsOf(answer: unknown): EmbedResult {
  const data = (answer as { data?: unknown })?.data;
  if (!Array.isArray(data)) throw new RemoteError('the server\'s embeddings answer has no data list');
  const ordered = [...data].sort((a: { index?: number }, b: { index?: number }) => (a?.index ?? 0) - (b?.index ?? 0));
  const embeddings = ordered.map((item: { embedding?: unknown }, i) => {
    const value = item?.embedding;
    if (typeof value === 'string') {
      const bytes = Buffer.from(value, 'base64');
      return Float32Array.from({ length: bytes.length / 4 }, (_, j) => bytes.readFloatLE(j * 4));
    }
    if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return Float32Array.from(value as number[]);
    throw new RemoteError(`the server's embedding ${i} is neither a float list nor base64`);
  });
  const promptTokens = (answer as { usage?: { prompt_tokens?: unknown } }).usage?.prompt_tokens;
  return { embeddings, usage: { promptTokens: typeof promptTokens === 'number' ? promptTokens : 0 } };
}

async function jsonOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text);
  } catch {
    return { error: { message: text.slice(0, 500) } };
  }
}

const REMOTE_CALL = "RemotePipeline.create({ remote: { baseURL: 'http://host:8000/v1', model: 'served-name', ... } }) (or Pipeline.create({ remote: ... }))";
const REMOTE_KEYS: readonly (keyof RemoteOptions)[] = ['baseURL', 'model', 'apiKey', 'headers', 'parsers', 'startsInReasoning', 'checkModel'];

/** RemotePipeline.create's argument, checked for shape: a wrong one is told the call, not left to a TypeError. */
function checkCreateShape(options: unknown): RemoteOptions {
  if (typeof options === 'string') {
    throw new InvalidOptionError('options', `expected { remote: { baseURL, model } }, got the string ${JSON.stringify(options)}: ${REMOTE_CALL}`);
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidOptionError('options', `expected { remote: { baseURL, model } }, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}: ${REMOTE_CALL}`);
  }
  const record = options as Record<string, unknown>;
  const others = Object.keys(record).filter((key) => key !== 'remote');
  if (record.remote === undefined && others.some((key) => (REMOTE_KEYS as readonly string[]).includes(key))) {
    throw new InvalidOptionError('remote', `missing: the server's settings go under remote, not beside it: ${REMOTE_CALL}`);
  }
  if (others.length > 0) throw new InvalidOptionError(others[0]!, `not an option of a remote pipeline (it takes remote only): ${REMOTE_CALL}`);
  const remote = record.remote;
  if (remote === null || typeof remote !== 'object' || Array.isArray(remote)) {
    throw new InvalidOptionError('remote', `expected { baseURL, model, ... }, got ${typeof remote === 'string' ? `the string ${JSON.stringify(remote)}` : remote === null ? 'null' : typeof remote}: ${REMOTE_CALL}`);
  }
  const unknown = Object.keys(remote).filter((key) => !(REMOTE_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new InvalidOptionError(`remote.${unknown[0]!}`, `unknown option (remote takes ${REMOTE_KEYS.join(', ')})`);
  const given = remote as Partial<Record<keyof RemoteOptions, unknown>>;
  if (given.apiKey !== undefined && typeof given.apiKey !== 'string') throw new InvalidOptionError('remote.apiKey', 'expected a string');
  if (given.headers !== undefined && (given.headers === null || typeof given.headers !== 'object' || Object.values(given.headers).some((value) => typeof value !== 'string'))) {
    throw new InvalidOptionError('remote.headers', 'expected an object of header names to string values');
  }
  for (const name of ['startsInReasoning', 'checkModel'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'boolean') throw new InvalidOptionError(`remote.${name}`, 'expected true or false');
  }
  if (given.parsers !== undefined && (given.parsers === null || typeof given.parsers !== 'object')) throw new InvalidOptionError('remote.parsers', 'expected { tool?, reasoning? }');
  return remote as RemoteOptions;
}
