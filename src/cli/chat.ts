import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ChatTemplateError, WeftError } from '../errors.js';
import type { ParserOptions } from '../pipeline/options.js';
import { inferReasoningParser, inferToolParser, type ModelSigns } from '../tool-formats/infer.js';
import { toolParserNames } from '../tool-formats/registry.js';
import type { ChatMessage, ToolCall, ToolDefinition } from '../text/types.js';
import { NO_PARSER, type Command } from './args.js';
import { requestOptions } from './generate.js';
import type { CliIo } from './io.js';
import { openModel } from './open-model.js';
import type { CliPipeline, OpenPipeline } from './pipeline-port.js';
import { PartWriter } from './render-parts.js';
import { RequestTimer } from './stats.js';
import { readToolsFile } from './tools-file.js';
import { EXIT_FAILURE, EXIT_OK } from './usage-error.js';

type ChatCommand = Extract<Command, { name: 'chat' }>;

const CHAT_HELP =
  'Commands: /tool <result> answers a tool call, /reset forgets the conversation, /help, /exit quits (or Ctrl-D); //text sends "/text". Ctrl-C stops an answer.\n';
const TOOL_HINT = 'weft: the CLI does not run tools: type the result as the next message with /tool <json>, e.g. /tool {"result":42}\n';

/** What every turn of one chat sends along with the messages. */
interface ChatSetup {
  parsers: ParserOptions;
  tools?: ToolDefinition[];
}

/**
 * `weft chat`: a read-eval-print loop over pipe.stream(messages). Each line the
 * user types is one turn; the whole conversation goes to the chat template.
 * Works on a terminal and with piped stdin (one message per line).
 */
export async function runChat(command: ChatCommand, io: CliIo, openPipeline: OpenPipeline): Promise<number> {
  // Read before loading, so a bad file costs no loading time (and exits 2).
  const tools = command.toolsFile !== undefined ? readToolsFile(command.toolsFile) : undefined;
  const pipeline = await openModel(command, io, openPipeline);
  const interactive = io.stdin.isTTY === true;
  const rl = createInterface({
    input: io.stdin,
    // readline draws its prompt and echo only on a terminal.
    ...(interactive ? { output: io.stdout.stream ?? (io.stdout as unknown as NodeJS.WritableStream), terminal: true } : { terminal: false }),
  });
  let answering: AbortController | undefined;
  const onInterrupt = (): void => {
    if (answering) answering.abort();
    else rl.close();
  };
  rl.on('SIGINT', onInterrupt);
  const stopListening = io.onInterrupt(onInterrupt);
  // Nobody reads the answers any more: stop the one being written and end the chat.
  const stopWatchingOutput = io.onOutputClosed?.(() => {
    answering?.abort();
    rl.close();
  });

  const initial: ChatMessage[] = command.system !== undefined ? [{ role: 'system', content: command.system }] : [];
  let messages = [...initial];
  // Tool calls of the last answer still waiting for a /tool result, in order.
  let pendingCalls: ToolCall[] = [];
  let toolHintShown = false;
  try {
    const setup: ChatSetup = { parsers: await chooseParsers(command, pipeline, io), ...(tools !== undefined ? { tools } : {}) };
    if (interactive && !command.quiet) io.stderr.write(CHAT_HELP);
    /** Generates the next assistant message for `input`; false if the chat cannot go on. */
    const reply = async (input: ChatMessage[], onReply: (reply: ChatMessage) => void): Promise<boolean> => {
      answering = new AbortController();
      const turn = await answer(pipeline, input, command, setup, io, answering.signal);
      answering = undefined;
      if (turn.fatal) return false;
      if (turn.reply) {
        onReply(turn.reply);
        pendingCalls = [...(turn.reply.toolCalls ?? [])];
        if (pendingCalls.length > 0 && !toolHintShown) {
          io.stderr.write(TOOL_HINT);
          toolHintShown = true;
        }
      }
      return true;
    };
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
        pendingCalls = [];
        io.stderr.write('weft: conversation reset\n');
      } else if (line === '/help') {
        io.stderr.write(CHAT_HELP);
      } else if (line === '/tool' || line.startsWith('/tool ')) {
        const result = line.slice('/tool'.length).trim();
        if (result === '') {
          io.stderr.write('weft: /tool needs the tool\'s result, e.g. /tool {"result":42}\n');
        } else {
          // The k-th result answers the k-th call, as chat templates expect.
          const call = pendingCalls.shift();
          messages.push({ role: 'tool', content: result, ...(call ? { toolCallId: call.id, name: call.name } : {}) });
          const next = pendingCalls[0];
          if (next) {
            io.stderr.write(`weft: ${pendingCalls.length} more tool result(s) expected, next for ${next.name}\n`);
          } else if (!(await reply(messages, (assistant) => messages.push(assistant)))) {
            return EXIT_FAILURE;
          }
        }
      } else if (/^\/[a-z]/i.test(line)) {
        // A mistyped command must not reach the model as a message.
        io.stderr.write(`weft: unknown command ${line.split(/\s/, 1)[0]}. ${CHAT_HELP}`);
      } else if (line !== '') {
        // "//text" sends "/text".
        const content = line.startsWith('//') ? rawLine.replace('//', '/') : rawLine;
        const user: ChatMessage = { role: 'user', content };
        if (!(await reply([...messages, user], (assistant) => messages.push(user, assistant)))) return EXIT_FAILURE;
      }
      prompt();
    }
    if (interactive) io.stdout.write('\n');
    return EXIT_OK;
  } finally {
    stopListening();
    stopWatchingOutput?.();
    rl.close();
    await pipeline.close();
  }
}

/** The parsers from the flags; the reasoning parser defaults to qwen3 for a model that thinks in <think> blocks. */
async function chooseParsers(command: ChatCommand, pipeline: CliPipeline, io: CliIo): Promise<ParserOptions> {
  const parsers: ParserOptions = {};
  const signs: ModelSigns = {
    render: (messages, options) => {
      if (pipeline.chatTemplate === undefined) throw new Error('no chat template');
      return pipeline.chatTemplate.render(messages, options);
    },
    hasToken: (text) => pipeline.tokenizer?.tokenToId(text) !== undefined,
  };
  const note = (text: string): void => {
    if (!command.quiet) io.stderr.write(`weft: ${text}\n`);
  };
  if (command.reasoningParser === undefined) {
    const inferred = await inferReasoningParser(signs);
    if (inferred !== undefined) {
      parsers.reasoning = inferred.parser;
      note(`reasoning parser ${inferred.parser}, since ${inferred.sign} (--reasoning-parser none turns it off)`);
    }
  } else if (command.reasoningParser !== NO_PARSER) {
    parsers.reasoning = command.reasoningParser;
  }
  if (command.toolParser !== undefined) parsers.tool = command.toolParser;
  if (command.toolsFile !== undefined && parsers.tool === undefined) {
    const inferred = await inferToolParser(signs, toolParserNames());
    if (inferred !== undefined) {
      parsers.tool = inferred.parser;
      note(`tool parser ${inferred.parser}, since ${inferred.sign} (--tool-parser picks another)`);
    } else {
      note('--tools without --tool-parser: the model sees the tools, but its calls are printed as plain text');
    }
  }
  const shippedTools = join(command.model, 'tools.json');
  if (command.toolsFile === undefined && existsSync(shippedTools)) {
    note(`the model folder has tools.json; pass --tools ${shippedTools} to offer those tools`);
  }
  return parsers;
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
  setup: ChatSetup,
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
      ...(setup.parsers.reasoning !== undefined || setup.parsers.tool !== undefined ? { parsers: setup.parsers } : {}),
      ...(setup.tools !== undefined ? { tools: setup.tools } : {}),
      ...(command.guidedTools === true ? { guidedTools: true } : {}),
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
  // Trimmed like the text a template would print back (the newlines around <think> blocks are the template's).
  const reply: ChatMessage = { role: 'assistant', content: content.trim() };
  if (reasoning.trim() !== '') reply.reasoning = reasoning.trim();
  if (toolCalls.length > 0) reply.toolCalls = toolCalls;
  return { reply };
}

export function describeError(error: unknown): string {
  if (error instanceof WeftError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
