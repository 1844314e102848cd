import { createInterface } from 'node:readline';
import { ChatTemplateError, WeftError } from '../errors.js';
import type { ChatMessage, ToolCall } from '../text/types.js';
import type { Command } from './args.js';
import { requestOptions } from './generate.js';
import type { CliIo } from './io.js';
import { openModel } from './open-model.js';
import type { CliPipeline, OpenPipeline } from './pipeline-port.js';
import { PartWriter } from './render-parts.js';
import { RequestTimer } from './stats.js';
import { EXIT_FAILURE, EXIT_OK } from './usage-error.js';

type ChatCommand = Extract<Command, { name: 'chat' }>;

const CHAT_HELP = 'Commands: /reset forgets the conversation, /exit quits (or Ctrl-D). Ctrl-C stops an answer.\n';

/**
 * `weft chat`: a read-eval-print loop over pipe.stream(messages). Each line the
 * user types is one turn; the whole conversation goes to the chat template.
 * Works on a terminal and with piped stdin (one message per line).
 */
export async function runChat(command: ChatCommand, io: CliIo, openPipeline: OpenPipeline): Promise<number> {
  const pipeline = await openModel(command, io, openPipeline);
  const interactive = io.stdin.isTTY === true;
  const rl = createInterface({
    input: io.stdin,
    // readline draws its prompt and echo only on a terminal.
    ...(interactive ? { output: io.stdout as unknown as NodeJS.WritableStream, terminal: true } : { terminal: false }),
  });
  let answering: AbortController | undefined;
  const onInterrupt = (): void => {
    if (answering) answering.abort();
    else rl.close();
  };
  rl.on('SIGINT', onInterrupt);
  const stopListening = io.onInterrupt(onInterrupt);

  const initial: ChatMessage[] = command.system !== undefined ? [{ role: 'system', content: command.system }] : [];
  let messages = [...initial];
  if (interactive && !command.quiet) io.stderr.write(CHAT_HELP);
  try {
    const prompt = (): void => {
      if (interactive) {
        rl.setPrompt('> ');
        rl.prompt();
      }
    };
    prompt();
    for await (const rawLine of rl) {
      const line = rawLine.trim();
      if (line === '/exit' || line === '/quit') break;
      if (line === '/reset') {
        messages = [...initial];
        io.stderr.write('weft: conversation reset\n');
      } else if (line === '/help') {
        io.stderr.write(CHAT_HELP);
      } else if (line !== '') {
        answering = new AbortController();
        const turn = await answer(pipeline, [...messages, { role: 'user', content: rawLine }], command, io, answering.signal);
        answering = undefined;
        if (turn.fatal) return EXIT_FAILURE;
        if (turn.reply) messages.push({ role: 'user', content: rawLine }, turn.reply);
      }
      prompt();
    }
    if (interactive) io.stdout.write('\n');
    return EXIT_OK;
  } finally {
    stopListening();
    rl.close();
    await pipeline.close();
  }
}

interface Turn {
  /** The assistant message to keep in the conversation (also when interrupted); undefined after an error. */
  reply?: ChatMessage;
  /** An error that every later turn would hit too (e.g. the model has no chat template). */
  fatal?: boolean;
}

async function answer(
  pipeline: CliPipeline,
  messages: ChatMessage[],
  command: ChatCommand,
  io: CliIo,
  signal: AbortSignal,
): Promise<Turn> {
  const writer = new PartWriter(io);
  const timer = new RequestTimer();
  let content = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  let finish: { finishReason: string; completionTokens: number } | undefined;
  try {
    const options = {
      ...requestOptions(command),
      ...(command.templateKwargs !== undefined ? { templateKwargs: command.templateKwargs } : {}),
      signal,
    };
    for await (const part of pipeline.stream(messages, options)) {
      if (part.type === 'finish') {
        finish = { finishReason: part.finishReason, completionTokens: part.usage.completionTokens };
        continue;
      }
      timer.markOutput();
      writer.write(part);
      if (part.type === 'text-delta') content += part.text;
      else if (part.type === 'reasoning-delta') reasoning += part.text;
      else if (part.type === 'tool-call') toolCalls.push({ id: part.id, name: part.name, arguments: part.arguments });
    }
  } catch (error) {
    writer.end();
    if (!signal.aborted) {
      io.stderr.write(`weft: ${describeError(error)}\n`);
      return { fatal: error instanceof ChatTemplateError || !(error instanceof WeftError) };
    }
  }
  writer.end();
  if (signal.aborted) io.stderr.write('weft: answer stopped\n');
  else if (!command.quiet && finish) io.stderr.write(`weft: ${timer.summary(finish.completionTokens, finish.finishReason)}\n`);
  const reply: ChatMessage = { role: 'assistant', content };
  if (reasoning !== '') reply.reasoning = reasoning;
  if (toolCalls.length > 0) reply.toolCalls = toolCalls;
  return { reply };
}

export function describeError(error: unknown): string {
  if (error instanceof WeftError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
