/**
 * The text sandbox: a model folder's tokenizer and chat templates run in a
 * child process, so that an untrusted template (an endless loop,
 * `range(1000000000)`, a huge output) or a tokenizer.json regex with
 * catastrophic backtracking can neither block the event loop nor end the
 * process.
 *
 * Why a process and not a worker thread: V8 ends the whole process when an
 * allocation overshoots a worker's `resourceLimits` in one step (an array
 * growing past the limit is "FATAL ERROR: Reached heap limit" for every
 * thread, measured on Node 20 with `range(1000000000)` and a 128 MB or 512 MB
 * limit; 256 MB happened to survive). A child's fatal error ends only the child.
 *
 * Bounds: each job has a deadline (`timeoutMs`, counted from when the worker
 * starts it) and the worker a heap limit (`maxHeapMb`); passing either ends
 * the worker, fails that job with ChatTemplateError or TokenizerError, and the
 * next job starts a fresh worker. Jobs run one at a time, in order; a job
 * waiting behind a slow one does not spend its deadline. The worker is started
 * on first use and keeps the host alive only while a job is pending.
 */

import { fork, type ChildProcess } from 'node:child_process';
import { ChatTemplateError, PromptTooLongError, TokenizerError, type WeftError } from '../../errors.js';
import { childExecArgv, entryScript, setChildRef } from '../../runtime/entry-script.js';
import type { ChatTemplateRenderOptions } from '../chat-template.js';
import type { ChatMessage } from '../types.js';
import type { TextJob, TextJobErrorCode, TextReply, TextSource } from './protocol.js';

export interface TextSandboxLimits {
  /** Most milliseconds one job may run. */
  readonly timeoutMs: number;
  /** The worker's old-generation heap limit. */
  readonly maxHeapMb: number;
}

export const DEFAULT_TEXT_LIMITS: TextSandboxLimits = { timeoutMs: 10_000, maxHeapMb: 512 };

type JobBody = TextJob extends infer J ? (J extends TextJob ? Omit<J, 'id'> : never) : never;

interface Pending {
  readonly job: TextJob;
  resolve(value: string | number[]): void;
  reject(error: WeftError): void;
}

const SCRIPT = entryScript(import.meta.url, './worker-entry.ts', 'text-worker');

export class TextSandbox {
  private worker: ChildProcess | undefined;
  private ready: Promise<void> | undefined;
  private readonly queue: Pending[] = [];
  private running: Pending | undefined;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly source: TextSource,
    readonly limits: TextSandboxLimits = DEFAULT_TEXT_LIMITS,
  ) {}

  get hasChatTemplate(): boolean {
    return this.source.templates !== undefined;
  }

  /** Token ids of `text`, as HfTokenizer.encode gives them. */
  async encode(text: string, addSpecialTokens: boolean): Promise<number[]> {
    return (await this.submit({ kind: 'encode', text, addSpecialTokens })) as number[];
  }

  /** The template's rendering of `messages`; longer than `maxChars` is a PromptTooLongError. */
  async render(messages: readonly ChatMessage[], options: ChatTemplateRenderOptions, maxChars: number): Promise<string> {
    return (await this.submit({ kind: 'render', messages, options, maxChars })) as string;
  }

  /** Terminates the worker; pending jobs fail with TokenizerError. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...(this.running ? [this.running] : []), ...this.queue.splice(0)];
    this.running = undefined;
    for (const job of pending) job.reject(new TokenizerError('the pipeline was closed while its prompt was prepared'));
    const worker = this.worker;
    this.worker = undefined;
    worker?.kill('SIGKILL');
  }

  private submit(body: JobBody): Promise<string | number[]> {
    if (this.closed) return Promise.reject(new TokenizerError('the pipeline is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { ...body, id: this.nextId++ } as TextJob, resolve, reject });
      this.pump();
    });
  }

  /** Starts the next job when none runs. */
  private pump(): void {
    if (this.running !== undefined || this.closed) return;
    const next = this.queue.shift();
    if (next === undefined) {
      if (this.worker) setChildRef(this.worker, false);
      return;
    }
    this.running = next;
    void this.start(next);
  }

  private async start(pending: Pending): Promise<void> {
    let worker: ChildProcess;
    try {
      worker = await this.ensureWorker();
    } catch (error) {
      return this.settle(pending, () => pending.reject(error as WeftError));
    }
    if (this.running !== pending) return; // closed meanwhile
    setChildRef(worker, true);
    const timer = setTimeout(() => {
      this.kill(worker);
      this.settle(pending, () => pending.reject(timeoutError(pending.job, this.limits.timeoutMs)));
    }, this.limits.timeoutMs);
    const onMessage = (reply: TextReply): void => {
      if ((reply.kind !== 'done' && reply.kind !== 'failed') || reply.id !== pending.job.id) return;
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      this.settle(pending, () => (reply.kind === 'done' ? pending.resolve(reply.value) : pending.reject(jobError(reply.code, reply.message))));
    };
    // An allocation past the heap limit ends the worker (V8's fatal error, then 'exit').
    const onExit = (): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      if (this.worker === worker) this.worker = undefined;
      this.settle(pending, () => pending.reject(memoryError(pending.job, this.limits.maxHeapMb)));
    };
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    worker.send(pending.job);
  }

  /** Runs `outcome` once for the running job, then starts the next. */
  private settle(pending: Pending, outcome: () => void): void {
    if (this.running !== pending) return;
    this.running = undefined;
    outcome();
    this.pump();
  }

  private kill(worker: ChildProcess): void {
    if (this.worker === worker) this.worker = undefined;
    worker.removeAllListeners('exit');
    worker.kill('SIGKILL');
  }

  private async ensureWorker(): Promise<ChildProcess> {
    if (this.worker !== undefined && this.ready !== undefined) {
      await this.ready;
      return this.worker;
    }
    const worker = fork(SCRIPT.file, [], {
      execArgv: [...childExecArgv(SCRIPT), `--max-old-space-size=${this.limits.maxHeapMb}`],
      serialization: 'advanced',
      // V8's report of a fatal error would land in the host's stderr; the job's error says it instead.
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    worker.on('error', () => {}); // a failed spawn or send is reported through 'exit'
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (reply: TextReply): void => {
        if (reply.kind === 'ready') resolve();
        else if (reply.kind === 'startup-failed') reject(new TokenizerError(`the text worker could not start: ${reply.message}`));
        else return;
        worker.off('message', onMessage);
        worker.off('exit', onExit);
      };
      const onExit = (code: number): void => reject(new TokenizerError(`the text worker exited while starting (code ${code})`));
      worker.on('message', onMessage);
      worker.once('exit', onExit);
    });
    worker.send(this.source);
    try {
      await this.ready;
    } catch (error) {
      if (this.worker === worker) this.worker = undefined;
      worker.kill('SIGKILL');
      throw error;
    }
    return worker;
  }
}

function jobError(code: TextJobErrorCode, message: string): WeftError {
  if (code === 'PROMPT_TOO_LONG') return new PromptTooLongError(message);
  return code === 'CHAT_TEMPLATE_ERROR' ? new ChatTemplateError(message) : new TokenizerError(message);
}

function timeoutError(job: TextJob, ms: number): WeftError {
  return job.kind === 'render'
    ? new ChatTemplateError(`the chat template did not finish rendering within ${ms} ms and was stopped`)
    : new TokenizerError(`tokenizing the prompt did not finish within ${ms} ms and was stopped (a tokenizer.json regex may backtrack catastrophically)`);
}

function memoryError(job: TextJob, mb: number): WeftError {
  return job.kind === 'render'
    ? new ChatTemplateError(`the chat template was stopped: rendering needed more than the sandbox's ${mb} MB heap`)
    : new TokenizerError(`tokenizing the prompt was stopped: it needed more than the sandbox's ${mb} MB heap`);
}
