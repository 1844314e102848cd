/**
 * Chat messages as users write them, checked and turned into weft's
 * ChatMessage before the template renders them. Besides weft's own shape, the
 * OpenAI shapes people copy from existing code are accepted: `content` as an
 * array of `{ type: 'text', text }` parts (joined with "\n", as vLLM does),
 * `content: null` beside tool calls, and snake_case `tool_calls` (arguments as
 * a JSON string), `tool_call_id` and `reasoning_content`. `weft serve` reads
 * its requests' messages here too, by the looser rules of a server
 * (NormalizeOptions.openAiRequest). Anything else that
 * would not render as written (an unknown role, an image part, a misspelt
 * field) is an InvalidOptionError naming the message and field: a wrong prompt
 * is never rendered.
 */

import { InvalidOptionError } from '../errors.js';
import type { ChatMessage, ToolCall } from '../text/types.js';
import { toJsonData } from './json-data.js';
import { checkKeys, isObject } from './option-values.js';

/** A text part of an OpenAI message's content. */
export interface TextContentPart {
  type: 'text';
  text: string;
}

/** A tool call in the OpenAI shape: arguments are a JSON string. */
export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** An OpenAI-style chat message (chat.completions request shape, text only). */
export interface OpenAIChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | TextContentPart[] | null;
  tool_calls?: OpenAIToolCall[];
  tool_call_id?: string;
  name?: string;
  reasoning_content?: string;
}

/** What chat() and stream() take: weft's messages or OpenAI-shaped ones, mixed freely. */
export type ChatInputMessage = ChatMessage | OpenAIChatMessage;

const ROLES = ['system', 'user', 'assistant', 'tool'];
const KEYS = ['role', 'content', 'reasoning', 'reasoning_content', 'toolCalls', 'tool_calls', 'toolCallId', 'tool_call_id', 'name'];

export interface NormalizeOptions {
  /**
   * The messages of an OpenAI request body, as `weft serve` reads them: the
   * `developer` role is `system`, fields weft does not know are passed over
   * (clients send extras), and a tool result without a `name` is given the
   * name of the call it answers.
   */
  readonly openAiRequest?: boolean;
}

export function normalizeMessages(messages: unknown, options: NormalizeOptions = {}): ChatMessage[] {
  if (!Array.isArray(messages)) throw new InvalidOptionError('messages', 'expected an array of { role, content }');
  if (messages.length === 0) throw new InvalidOptionError('messages', 'expected at least one message');
  // Tool results name their tool through the call they answer.
  const callNames = new Map<string, string>();
  return messages.map((message: unknown, i) => {
    const out = normalizeMessage(message, `messages[${i}]`, options);
    for (const call of out.toolCalls ?? []) callNames.set(call.id, call.name);
    if (options.openAiRequest === true && out.role === 'tool' && out.name === undefined && out.toolCallId !== undefined) {
      const name = callNames.get(out.toolCallId);
      if (name !== undefined) out.name = name;
    }
    return out;
  });
}

function normalizeMessage(message: unknown, at: string, options: NormalizeOptions): ChatMessage {
  if (!isObject(message)) throw new InvalidOptionError(at, 'expected { role, content }');
  // Fields left null (as OpenAI responses carry them: refusal, audio) say nothing; others must be known.
  const present = Object.fromEntries(Object.entries(message).filter(([, value]) => value !== null && value !== undefined));
  if (options.openAiRequest !== true) checkKeys(at, present, KEYS);
  const role = options.openAiRequest === true && message.role === 'developer' ? 'system' : message.role;
  if (typeof role !== 'string' || !ROLES.includes(role)) {
    const roles = options.openAiRequest === true ? '"system", "developer", "user", "assistant" or "tool"' : '"system", "user", "assistant" or "tool"';
    throw new InvalidOptionError(`${at}.role`, `expected ${roles}, got ${JSON.stringify(role)}`);
  }
  const toolCalls = normalizeToolCalls(message, at);
  const out: ChatMessage = { role: role as ChatMessage['role'], content: normalizeContent(message.content, `${at}.content`, toolCalls !== undefined) };
  const reasoning = one(message, at, 'reasoning', 'reasoning_content');
  if (reasoning !== undefined) out.reasoning = reasoning;
  if (toolCalls !== undefined) {
    if (role !== 'assistant') throw new InvalidOptionError(`${at}.toolCalls`, 'only an assistant message makes tool calls');
    out.toolCalls = toolCalls;
  }
  const toolCallId = one(message, at, 'toolCallId', 'tool_call_id');
  if (toolCallId !== undefined) out.toolCallId = toolCallId;
  if (present.name !== undefined) {
    if (typeof present.name !== 'string') throw new InvalidOptionError(`${at}.name`, 'expected a string');
    out.name = present.name;
  }
  return out;
}

/** A string field given in weft's camelCase or OpenAI's snake_case (not both). */
function one(message: Record<string, unknown>, at: string, camel: string, snake: string): string | undefined {
  const a = message[camel] ?? undefined;
  const b = message[snake] ?? undefined;
  if (a !== undefined && b !== undefined) throw new InvalidOptionError(`${at}.${snake}`, `give ${camel} or ${snake}, not both`);
  const value = a ?? b;
  if (value !== undefined && typeof value !== 'string') throw new InvalidOptionError(`${at}.${a !== undefined ? camel : snake}`, 'expected a string');
  return value as string | undefined;
}

function normalizeContent(content: unknown, at: string, hasToolCalls: boolean): string {
  if (typeof content === 'string') return content;
  // OpenAI sends content: null on an assistant message that only calls tools.
  if ((content === null || content === undefined) && hasToolCalls) return '';
  if (!Array.isArray(content)) throw new InvalidOptionError(at, 'expected a string or an array of { type: "text", text } parts');
  return content
    .map((part: unknown, j) => {
      if (!isObject(part)) throw new InvalidOptionError(`${at}[${j}]`, 'expected { type: "text", text }');
      if (part.type !== 'text') {
        throw new InvalidOptionError(`${at}[${j}]`, `${JSON.stringify(part.type)} parts are not supported: weft's models read text only ({ type: "text", text })`);
      }
      if (typeof part.text !== 'string') throw new InvalidOptionError(`${at}[${j}].text`, 'expected a string');
      return part.text;
    })
    .join('\n');
}

/** weft's toolCalls ({ id, name, arguments: object }) or OpenAI's tool_calls ({ id, type, function: { name, arguments: JSON } }). */
function normalizeToolCalls(message: Record<string, unknown>, at: string): ToolCall[] | undefined {
  const camel = message.toolCalls ?? undefined;
  const snake = message.tool_calls ?? undefined;
  if (camel !== undefined && snake !== undefined) throw new InvalidOptionError(`${at}.tool_calls`, 'give toolCalls or tool_calls, not both');
  const calls = camel ?? snake;
  if (calls === undefined) return undefined;
  const field = camel !== undefined ? 'toolCalls' : 'tool_calls';
  if (!Array.isArray(calls)) throw new InvalidOptionError(`${at}.${field}`, 'expected an array of tool calls');
  if (calls.length === 0) return undefined;
  return calls.map((call: unknown, j) => {
    const where = `${at}.${field}[${j}]`;
    if (!isObject(call) || typeof call.id !== 'string') throw new InvalidOptionError(where, 'expected a tool call with a string id');
    if (isObject(call.function)) {
      const { name, arguments: args } = call.function;
      if (typeof name !== 'string' || name === '') throw new InvalidOptionError(`${where}.function.name`, 'expected a string');
      return { id: call.id, name, arguments: parseArguments(args, `${where}.function.arguments`) };
    }
    if (typeof call.name !== 'string' || call.name === '') {
      throw new InvalidOptionError(where, 'expected { id, name, arguments } or { id, type: "function", function: { name, arguments } }');
    }
    return { id: call.id, name: call.name, arguments: parseArguments(call.arguments, `${where}.arguments`) };
  });
}

/** Arguments as an object, or as the JSON text of one (OpenAI's shape). */
function parseArguments(args: unknown, at: string): Record<string, unknown> {
  if (args === undefined) return {};
  let value = args;
  if (typeof args === 'string') {
    try {
      value = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      throw new InvalidOptionError(at, `expected a JSON object, got ${JSON.stringify(args)}`);
    }
  }
  if (!isObject(value)) throw new InvalidOptionError(at, 'expected a JSON object');
  return toJsonData(value, at) as Record<string, unknown>;
}
