/**
 * POST /v1/chat/completions body -> weft messages and ChatOptions.
 * Accepts every OpenAI message shape that carries text (string or text parts,
 * `developer` as system, assistant `tool_calls` with JSON-string arguments,
 * `tool` results) and the vLLM/OVMS extras people send (`chat_template_kwargs`,
 * `top_k`, `min_p`, `repetition_penalty`, `ignore_eos`, `reasoning_content` of
 * earlier turns). `response_format` and `tool_choice` become guided generation
 * (guided-fields.ts); `parallel_tool_calls` is `parallelToolCalls`, and with
 * `--enable-tool-guided-generation` a chat with tools and tool_choice "auto" is tool-guided.
 */

import type { ChatOptions } from '../pipeline/options.js';
import type { ChatMessage, ToolCall, ToolDefinition } from '../text/types.js';
import { isGuidedToolParser } from '../guided/tool-formats.js';
import { badRequest } from './errors.js';
import { isJsonObject, optionalBoolean, optionalInteger, optionalObject, requireObject, type Json } from './fields.js';
import { parseToolChoice } from './guided-fields.js';
import { checkModel, samplingOptions, streamFields, type ServedModel } from './sampling-fields.js';

export interface ChatRequest {
  readonly messages: ChatMessage[];
  readonly options: ChatOptions;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** Set when the client asked for logprobs: how many alternatives per token (0-20). */
  readonly topLogprobs: number | undefined;
}

export function parseChatRequest(input: unknown, served: ServedModel): ChatRequest {
  const body = requireObject(input, 'the request body');
  checkModel(body, served);
  const options: ChatOptions = samplingOptions(body);
  const tools = parseTools(body.tools);
  const choice = parseToolChoice(body.tool_choice);
  // "none" without a grammar to forbid calls: the tools are left out of the prompt instead.
  const offerTools = choice !== 'none' || guidesToolCalls(served);
  if (tools !== undefined && offerTools) options.tools = tools;
  if (choice !== 'auto' && offerTools) options.toolChoice = choice;
  if (choice === 'auto' && options.tools !== undefined && served.guidedTools === true) options.guidedTools = true;
  const parallel = optionalBoolean(body, 'parallel_tool_calls');
  if (parallel !== undefined) options.parallelToolCalls = parallel;
  const kwargs = optionalObject(body, 'chat_template_kwargs');
  if (kwargs !== undefined) options.templateKwargs = kwargs;
  const wantLogprobs = optionalBoolean(body, 'logprobs') ?? false;
  const top = optionalInteger(body, 'top_logprobs');
  if (top !== undefined && !wantLogprobs) throw badRequest('top_logprobs needs logprobs: true', 'top_logprobs');
  // weft's logprobs option counts alternatives and implies the chosen token's own; 0 turns it off.
  if (wantLogprobs) options.logprobs = Math.max(1, top ?? 0);
  return { messages: parseMessages(body.messages), options, ...streamFields(body), topLogprobs: wantLogprobs ? (top ?? 0) : undefined };
}

/**
 * Whether the served tool parser has a grammar, so `tool_choice: "none"` can be enforced with
 * the tools still in the prompt (as OpenAI does). Without one, "none" leaves the tools out;
 * "required" and a named function are refused by the pipeline (a 400 naming tool_choice).
 */
function guidesToolCalls(served: ServedModel): boolean {
  return served.toolParser !== undefined && isGuidedToolParser(served.toolParser);
}

function parseTools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw badRequest('tools must be an array', 'tools');
  return value.map((tool: unknown, i) => {
    const field = `tools[${i}]`;
    if (!isJsonObject(tool) || tool.type !== 'function' || !isJsonObject(tool.function)) {
      throw badRequest(`${field} must be {"type":"function","function":{...}}`, field);
    }
    const fn = tool.function;
    if (typeof fn.name !== 'string' || fn.name === '') throw badRequest(`${field}.function.name must be a non-empty string`, `${field}.function.name`);
    if (fn.description !== undefined && fn.description !== null && typeof fn.description !== 'string') {
      throw badRequest(`${field}.function.description must be a string`, `${field}.function.description`);
    }
    if (fn.parameters !== undefined && fn.parameters !== null && !isJsonObject(fn.parameters)) {
      throw badRequest(`${field}.function.parameters must be a JSON schema object`, `${field}.function.parameters`);
    }
    return {
      type: 'function',
      function: {
        name: fn.name,
        ...(typeof fn.description === 'string' && { description: fn.description }),
        ...(isJsonObject(fn.parameters) && { parameters: fn.parameters }),
      },
    };
  });
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw badRequest('messages must be a non-empty array', 'messages');
  // Tool results name their tool through the call they answer.
  const callNames = new Map<string, string>();
  return value.map((raw: unknown, i) => {
    const field = `messages[${i}]`;
    const message = requireObject(raw, field);
    const content = textContent(message.content, `${field}.content`);
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: content ?? '' };
      case 'user':
        return { role: 'user', content: content ?? '' };
      case 'assistant': {
        const toolCalls = parseToolCalls(message.tool_calls, `${field}.tool_calls`);
        for (const call of toolCalls) callNames.set(call.id, call.name);
        const reasoning = message.reasoning_content ?? message.reasoning;
        return {
          role: 'assistant',
          content: content ?? '',
          ...(typeof reasoning === 'string' && reasoning !== '' && { reasoning }),
          ...(toolCalls.length > 0 && { toolCalls }),
        };
      }
      case 'tool': {
        const id = message.tool_call_id;
        if (typeof id !== 'string') throw badRequest(`${field}.tool_call_id must be a string`, `${field}.tool_call_id`);
        const name = typeof message.name === 'string' ? message.name : callNames.get(id);
        return { role: 'tool', content: content ?? '', toolCallId: id, ...(name !== undefined && { name }) };
      }
      default:
        throw badRequest(`${field}.role must be "system", "developer", "user", "assistant" or "tool"`, `${field}.role`);
    }
  });
}

/** A string, null, or an array of text parts (joined by newlines, as vLLM does). */
function textContent(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw badRequest(`${field} must be a string or an array of content parts`, field);
  return value
    .map((part: unknown, j) => {
      if (!isJsonObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
        const kind = isJsonObject(part) && typeof part.type === 'string' ? ` (got "${part.type}")` : '';
        throw badRequest(`${field}[${j}] must be a text part {"type":"text","text":...}; this server takes text only${kind}`, `${field}[${j}]`);
      }
      return part.text;
    })
    .join('\n');
}

function parseToolCalls(value: unknown, field: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badRequest(`${field} must be an array`, field);
  return value.map((raw: unknown, k) => {
    const where = `${field}[${k}]`;
    const call = requireObject(raw, where);
    const fn = requireObject(call.function, `${where}.function`);
    if (typeof fn.name !== 'string') throw badRequest(`${where}.function.name must be a string`, `${where}.function.name`);
    return { id: typeof call.id === 'string' ? call.id : `call_${k}`, name: fn.name, arguments: parseArguments(fn.arguments, `${where}.function.arguments`) };
  });
}

/** OpenAI sends arguments as a JSON string; an object is accepted as it is. */
function parseArguments(value: unknown, field: string): Json {
  if (isJsonObject(value)) return value;
  if (value === undefined || value === null || value === '') return {};
  if (typeof value !== 'string') throw badRequest(`${field} must be a JSON string`, field);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw badRequest(`${field} is not valid JSON`, field);
  }
  if (!isJsonObject(parsed)) throw badRequest(`${field} must encode a JSON object`, field);
  return parsed;
}
