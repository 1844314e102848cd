/**
 * An isolated pipeline's host side: the pipeline API (PipelineFace,
 * ModelPipeline), served by a child process that runs the engine, the native
 * backend and the text sandbox (child-entry.ts). Options are checked here, at
 * once, as in process; parts stream back over IPC and PipelineFace folds them
 * as it folds the in-process ones, so generate(), chat() and stream() give
 * what they give in process.
 *
 * When the child dies (a native crash, SIGKILL, out of memory), every request
 * in flight fails with BackendCrashedError and a new child is started for the
 * requests that follow; this process notices nothing else. Invariant: every
 * run in `runs` settles exactly once (its part, end or failed message, or the
 * child's exit).
 */

import type { EmbedInput, EmbedOptions, EmbedResult } from '../embeddings/embed.js';
import type { RerankOptions, RerankResult } from '../embeddings/rerank.js';
import { fork, type ChildProcess } from 'node:child_process';
import { AbortError, BackendCrashedError, InvalidOptionError, PipelineClosedError } from '../errors.js';
import { PipelineFace, type ModelPipeline, type PartRun, type PipelineEvents, type PipelineStats } from '../pipeline/face.js';
import { resolveRequestOptions, type ChatOptions, type PipelineOptions } from '../pipeline/options.js';
import type { RequestPart } from '../pipeline/run-request.js';
import { childExecArgv, entryScript, setChildRef } from '../runtime/entry-script.js';
import type { ChatTemplate } from '../text/chat-template.js';
import { loadText } from '../text/load-text.js';
import type { GenerationDefaults, Tokenizer } from '../text/types.js';
import { fromErrorData } from './errors.js';
import { PartChannel } from './part-channel.js';
import type { ChildMessage, HostMessage } from './protocol.js';

const SCRIPT = entryScript(import.meta.url, './child-entry.ts', 'isolated-child');

/** How long close() waits for the child to close its pipeline before killing it. */
const CLOSE_TIMEOUT_MS = 10_000;

export class IsolatedPipeline extends PipelineFace<PipelineEvents> implements ModelPipeline {
  private child: ChildProcess | undefined;
  private opening: Promise<ChildProcess> | undefined;
  private readonly runs = new Map<number, PartChannel>();
  /** embed() and rerank() calls in flight, by id (the same ids as runs). */
  private readonly calls = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  private nextId = 1;
  private closed = false;
  private closing: Promise<void> | undefined;
  private latestStats: PipelineStats | undefined;
  /** Children started after the first (one per crash). */
  private restarts = 0;

  private constructor(
    private readonly options: PipelineOptions,
    readonly tokenizer: Tokenizer,
    readonly chatTemplate: ChatTemplate | undefined,
    readonly generationDefaults: GenerationDefaults,
  ) {
    super();
  }

  /** Starts the child and opens the model there; a load error rejects as it would in process. */
  static async start(options: PipelineOptions): Promise<IsolatedPipeline> {
    if (options.tokenizer !== undefined || options.chatTemplate !== undefined) {
      throw new InvalidOptionError('isolation', 'a tokenizer or chat template object cannot cross into the child process: "process" isolation loads them from the model folder');
    }
    const first = new ChildSpawn(options);
    const child = await first.opened;
    const text = await loadText(options.model!).catch(async (error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    });
    const pipe = new IsolatedPipeline(options, text.tokenizer, text.chatTemplate, text.generationDefaults);
    pipe.adopt(child, first.stats);
    return pipe;
  }

  /** The child's process id (for tests and monitoring); undefined while none runs. */
  get childPid(): number | undefined {
    return this.child?.pid;
  }

  /** How many times a crashed child was replaced. */
  get childRestarts(): number {
    return this.restarts;
  }

  /** The child's stats as of its latest event (a fresh child starts from zero). */
  stats(): PipelineStats {
    return this.latestStats!;
  }

  /** Ends every pending request with PipelineClosedError and stops the child. Idempotent. */
  override close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      const child = this.child ?? (await this.opening?.catch(() => undefined));
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return this.failRuns(new PipelineClosedError('the pipeline was closed while the request ran'));
      setChildRef(child, true);
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
      child.send({ kind: 'close' } satisfies HostMessage);
      await exited;
      clearTimeout(timer);
      this.failRuns(new PipelineClosedError('the pipeline was closed while the request ran'));
    })();
    return this.closing;
  }

  /** pipe.embed() in the child: the same checks, vectors and errors as in process. */
  embed(input: EmbedInput, options: EmbedOptions = {}): Promise<EmbedResult> {
    const { signal, ...rest } = options;
    return this.callChild<EmbedResult>((id) => ({ kind: 'embed', id, input, options: rest }), signal);
  }

  /** pipe.rerank() in the child: the same checks, scores and errors as in process. */
  rerank(query: string, documents: readonly string[], options: RerankOptions = {}): Promise<RerankResult> {
    const { signal, ...rest } = options;
    return this.callChild<RerankResult>((id) => ({ kind: 'rerank', id, query, documents, options: rest }), signal);
  }

  /** One call answered by one result message (`embedded`, `reranked`) or `failed`, aborted by `signal`. */
  private async callChild<T>(message: (id: number) => HostMessage, signal: AbortSignal | undefined): Promise<T> {
    if (this.closed) throw new PipelineClosedError();
    if (signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: signal.reason });
    const child = await this.ensureChild();
    const id = this.nextId++;
    const result = new Promise<T>((resolve, reject) => this.calls.set(id, { resolve: resolve as (result: unknown) => void, reject }));
    try {
      child.send(message(id));
    } catch (error) {
      this.calls.delete(id);
      throw new InvalidOptionError('options', `cannot be sent to the isolated engine: ${(error as Error).message}`);
    }
    setChildRef(child, true);
    const abort = (): void => {
      if (this.child === child && this.calls.has(id)) child.send({ kind: 'abort', id } satisfies HostMessage);
    };
    signal?.addEventListener('abort', abort, { once: true });
    // Aborted while the child was started: the listener will never fire.
    if (signal?.aborted) abort();
    try {
      return await result;
    } finally {
      signal?.removeEventListener('abort', abort);
      this.calls.delete(id);
      if (this.runs.size === 0 && this.calls.size === 0 && this.child) setChildRef(this.child, false);
    }
  }

  /** Checks options at once (as in process); the run starts when first read. */
  protected override request(input: unknown, options: ChatOptions, chat: boolean): PartRun {
    resolveRequestOptions(options, this.generationDefaults, chat);
    const { signal, ...rest } = options;
    return () => this.remoteRun(input, rest, chat, signal);
  }

  private async *remoteRun(input: unknown, options: Record<string, unknown>, chat: boolean, signal: AbortSignal | undefined): AsyncGenerator<RequestPart> {
    if (this.closed) throw new PipelineClosedError();
    if (signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: signal.reason });
    const child = await this.ensureChild();
    const id = this.nextId++;
    const channel = new PartChannel();
    try {
      child.send({ kind: 'request', id, input, options, chat } satisfies HostMessage);
    } catch (error) {
      throw new InvalidOptionError('options', `cannot be sent to the isolated engine: ${(error as Error).message}`);
    }
    this.runs.set(id, channel);
    setChildRef(child, true);
    const abort = (): void => {
      if (this.child === child && !channel.isSettled) child.send({ kind: 'abort', id } satisfies HostMessage);
    };
    signal?.addEventListener('abort', abort, { once: true });
    try {
      yield* channel;
    } finally {
      signal?.removeEventListener('abort', abort);
      // A consumer that leaves early (break, return, throw) cancels the request.
      if (!channel.isSettled) abort();
      this.runs.delete(id);
      if (this.runs.size === 0 && this.calls.size === 0 && this.child) setChildRef(this.child, false);
    }
  }

  private ensureChild(): Promise<ChildProcess> {
    if (this.child) return Promise.resolve(this.child);
    this.opening ??= (async () => {
      const spawn = new ChildSpawn(this.options);
      try {
        const child = await spawn.opened;
        this.restarts++;
        this.adopt(child, spawn.stats);
        return child;
      } finally {
        this.opening = undefined;
      }
    })();
    return this.opening;
  }

  /** Takes an opened child: routes its messages, and replaces it when it dies. */
  private adopt(child: ChildProcess, stats: unknown): void {
    this.child = child;
    this.latestStats = stats as PipelineStats;
    child.on('message', (message: ChildMessage) => this.onMessage(message));
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      if (this.closed) return;
      this.failRuns(new BackendCrashedError(`the engine process died (${signal ?? `exit code ${code}`}) while the request ran; a new one serves the next requests`));
      this.log(`the engine process died (${signal ?? `exit code ${code}`}); starting a new one`);
      // Start the replacement now, so the next request does not wait for the model to load.
      this.ensureChild().catch((error: unknown) => this.log(`the engine process could not be restarted: ${String(error)}`));
    });
    if (this.runs.size === 0 && this.calls.size === 0) setChildRef(child, false);
  }

  private onMessage(message: ChildMessage): void {
    switch (message.kind) {
      case 'batch':
        for (const inner of message.messages) this.onMessage(inner);
        return;
      case 'part':
        this.runs.get(message.id)?.push(message.part);
        return;
      case 'end':
        this.runs.get(message.id)?.end();
        return;
      case 'failed':
        this.runs.get(message.id)?.fail(fromErrorData(message.error));
        this.calls.get(message.id)?.reject(fromErrorData(message.error));
        return;
      case 'embedded':
      case 'reranked':
        this.calls.get(message.id)?.resolve(message.result);
        return;
      case 'event':
        this.latestStats = message.stats as PipelineStats;
        if (message.name === 'log') this.options.logger?.(String(message.args[0]));
        this.safeEmit(message.name as keyof PipelineEvents, message.args);
        return;
      default:
        return;
    }
  }

  private failRuns(error: Error): void {
    for (const channel of this.runs.values()) channel.fail(error);
    for (const pending of this.calls.values()) pending.reject(error);
  }

  private log(message: string): void {
    this.safeEmit('log', [message]);
    try {
      this.options.logger?.(message);
    } catch {
      // The logger is user code.
    }
  }

  /** Listeners are user code: what they throw stays with them. */
  private safeEmit(event: keyof PipelineEvents, args: unknown[]): void {
    try {
      (this.emit as (event: string, ...args: unknown[]) => boolean)(event, ...args);
    } catch {
      // As in process: a throwing listener fails nothing.
    }
  }
}

/** One child being started: resolves `opened` once its pipeline is open, rejects with the typed load error otherwise. */
class ChildSpawn {
  readonly opened: Promise<ChildProcess>;
  stats: unknown;

  constructor(options: PipelineOptions) {
    const child = fork(SCRIPT.file, [], {
      execArgv: childExecArgv(SCRIPT),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.on('error', () => {}); // a failed spawn or send shows as 'exit'
    this.opened = new Promise((resolve, reject) => {
      const onMessage = (message: ChildMessage): void => {
        if (message.kind === 'progress') {
          options.onProgress?.(message.progress as never);
          return;
        }
        if (message.kind === 'opened') {
          this.stats = message.stats;
          done();
          resolve(child);
        } else if (message.kind === 'open-failed') {
          done();
          child.kill('SIGKILL');
          reject(fromErrorData(message.error));
        }
      };
      const onExit = (code: number | null, signal: string | null): void => {
        done();
        reject(new BackendCrashedError(`the engine process died while opening the model (${signal ?? `exit code ${code}`})`));
      };
      const done = (): void => {
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
    child.send({ kind: 'open', options: childOptions(options) } satisfies HostMessage);
  }
}

/** The options the child's in-process Pipeline gets: everything that is data; functions stay in the host. */
function childOptions(options: PipelineOptions): Record<string, unknown> {
  const { isolation: _isolation, onProgress: _onProgress, logger: _logger, ...rest } = options;
  return rest as Record<string, unknown>;
}

