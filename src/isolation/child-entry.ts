/**
 * The child process of an isolated pipeline: an ordinary in-process pipeline
 * (engine, native backend, text sandbox) driven by the host's messages. Each
 * request's parts go back as they come; the pipeline's events go back with
 * its stats. When the host goes away (its channel closes) this process ends.
 */

import type { EmbedInput } from '../embeddings/embed.js';
import { InProcessPipeline } from '../pipeline/pipeline.js';
import { toErrorData } from './errors.js';
import type { ChildMessage, HostMessage } from './protocol.js';

const send = (message: ChildMessage): void => void process.send?.(message);

/** Parts and events wait for the end of the turn and go as one message: IPC costs per message, not per byte. */
let batch: ChildMessage[] = [];
function sendBatched(message: ChildMessage): void {
  if (batch.length === 0) setImmediate(flush);
  batch.push(message);
}
function flush(): void {
  const messages = batch;
  batch = [];
  send({ kind: 'batch', messages });
}
let pipe: InProcessPipeline | undefined;
const runs = new Map<number, AbortController>();

/** Test hook (docs/pipeline.md): the child aborts natively (SIGABRT) after this many engine steps. */
const abortAtStep = Number(process.env.WEFT_ISOLATION_TEST_ABORT_AT_STEP ?? 0);

process.on('disconnect', () => process.exit(0));
process.on('message', (message: HostMessage) => {
  switch (message.kind) {
    case 'open':
      void open(message.options);
      return;
    case 'request':
      void run(message.id, message.input, message.options, message.chat);
      return;
    case 'embed':
      void call(message.id, async (pipe, signal) => ({ kind: 'embedded', id: message.id, result: await pipe.embed(message.input as EmbedInput, { ...message.options, signal }) }));
      return;
    case 'rerank':
      void call(message.id, async (pipe, signal) => ({ kind: 'reranked', id: message.id, result: await pipe.rerank(message.query as string, message.documents as string[], { ...message.options, signal }) }));
      return;
    case 'abort':
      runs.get(message.id)?.abort();
      return;
    case 'close':
      void (async () => {
        await pipe?.close();
        await new Promise<void>((resolve) => setImmediate(resolve)); // the last batch goes first
        send({ kind: 'closed' });
        process.disconnect?.();
      })();
  }
});

async function open(options: Record<string, unknown>): Promise<void> {
  try {
    pipe = await InProcessPipeline.create({ ...options, onProgress: (progress) => send({ kind: 'progress', progress }) });
  } catch (error) {
    send({ kind: 'open-failed', error: toErrorData(error) });
    return;
  }
  const opened = pipe;
  for (const name of ['step', 'request-start', 'request-preempted', 'request-finish', 'log'] as const) {
    opened.on(name, (...args: unknown[]) => {
      sendBatched({ kind: 'event', name, args, stats: opened.stats() });
      if (name === 'step' && abortAtStep > 0 && opened.stats().steps >= abortAtStep) process.abort();
    });
  }
  send({ kind: 'opened', generationDefaults: opened.generationDefaults, stats: opened.stats() });
}

async function run(id: number, input: unknown, options: Record<string, unknown>, chat: boolean): Promise<void> {
  const controller = new AbortController();
  runs.set(id, controller);
  try {
    if (pipe === undefined) throw new Error('the pipeline is not open');
    for await (const part of pipe.runParts(input, { ...options, signal: controller.signal }, chat)) sendBatched({ kind: 'part', id, part });
    sendBatched({ kind: 'end', id });
  } catch (error) {
    sendBatched({ kind: 'failed', id, error: toErrorData(error) });
  } finally {
    runs.delete(id);
  }
}

/** One embed() or rerank() call: its answer as one message, or `failed`; aborted by the host's `abort`. */
async function call(id: number, start: (pipe: InProcessPipeline, signal: AbortSignal) => Promise<ChildMessage>): Promise<void> {
  const controller = new AbortController();
  runs.set(id, controller);
  try {
    if (pipe === undefined) throw new Error('the pipeline is not open');
    sendBatched(await start(pipe, controller.signal));
  } catch (error) {
    sendBatched({ kind: 'failed', id, error: toErrorData(error) });
  } finally {
    runs.delete(id);
  }
}
