import { PassThrough } from 'node:stream';
import { AbortError } from '../../src/errors.js';
import type { CliIo } from '../../src/cli/io.js';
import type { CliPipeline, CliPipelineOptions, CliRequestOptions, StreamPart } from '../../src/cli/pipeline-port.js';
import type { ChatMessage } from '../../src/text/types.js';

/** Collected stdout/stderr, a scripted stdin, and a Ctrl-C button. */
export interface TestIo extends CliIo {
  out(): string;
  err(): string;
  interrupt(): void;
  interruptListeners(): number;
}

export function testIo(options: { stdin?: string; stdinIsTTY?: boolean; tty?: boolean; env?: Record<string, string> } = {}): TestIo {
  let out = '';
  let err = '';
  const handlers = new Set<() => void>();
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (options.stdinIsTTY) stdin.isTTY = true;
  if (options.stdin !== undefined) stdin.end(options.stdin);
  return {
    stdin,
    stdout: { write: (text: string) => (out += text), isTTY: options.tty ?? false, columns: 80 },
    stderr: { write: (text: string) => (err += text), isTTY: options.tty ?? false, columns: 80 },
    env: options.env ?? {},
    onInterrupt(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    out: () => out,
    err: () => err,
    interrupt: () => {
      for (const handler of [...handlers]) handler();
    },
    interruptListeners: () => handlers.size,
  };
}

export interface StreamCall {
  input: string | ChatMessage[];
  options: CliRequestOptions;
}

/**
 * A stand-in pipeline: replies with scripted parts per call, records what it
 * was asked, and honours abort signals between parts like the real one.
 */
export class FakePipeline implements CliPipeline {
  readonly calls: StreamCall[] = [];
  closed = false;
  /** Milliseconds between parts (to interrupt mid-stream). */
  delayMs = 0;
  /** What the CLI may look at to pick a default reasoning parser; none unless a test sets them. */
  tokenizer?: CliPipeline['tokenizer'];
  chatTemplate?: CliPipeline['chatTemplate'];

  constructor(private readonly reply: (call: StreamCall, index: number) => StreamPart[]) {}

  stream(input: string | ChatMessage[], options: CliRequestOptions = {}): AsyncIterable<StreamPart> {
    const call: StreamCall = { input: structuredClone(input), options: { ...options } };
    const index = this.calls.push(call) - 1;
    const parts = this.reply(call, index);
    const delayMs = this.delayMs;
    return {
      async *[Symbol.asyncIterator]() {
        for (const part of parts) {
          if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
          if (options.signal?.aborted) throw new AbortError();
          yield part;
        }
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export function textReply(text: string, finishReason = 'stop'): StreamPart[] {
  const words = text.split(/(?<= )/);
  return [
    ...words.map((word): StreamPart => ({ type: 'text-delta', text: word })),
    { type: 'finish', finishReason: finishReason as 'stop', usage: { promptTokens: 3, completionTokens: words.length, cachedPromptTokens: 0 } },
  ];
}

/** An OpenPipeline that records its options and hands out `pipeline`, reporting some progress first. */
export function opener(pipeline: CliPipeline) {
  const opened: CliPipelineOptions[] = [];
  const open = async (options: CliPipelineOptions): Promise<CliPipeline> => {
    opened.push(options);
    options.onProgress?.({ phase: 'config', loaded: 0, total: 0 });
    options.onProgress?.({ phase: 'weights', loaded: 512, total: 1024 });
    options.onProgress?.({ phase: 'weights', loaded: 1024, total: 1024 });
    options.onProgress?.({ phase: 'done', loaded: 1024, total: 1024 });
    return pipeline;
  };
  return { open, opened };
}
