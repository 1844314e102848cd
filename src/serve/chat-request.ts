/**
 * POST /v1/chat/completions body -> weft messages and ChatOptions.
 * Messages are read as the pipeline reads OpenAI-shaped ones
 * (pipeline/messages.ts: string or text parts, `developer` as system,
 * assistant `tool_calls` with JSON-string arguments, `tool` results; fields
 * weft does not know are passed over). Besides OpenAI's fields, the vLLM/OVMS
 * extras people send (`chat_template_kwargs`, `top_k`, `min_p`, `repetition_penalty`, `ignore_eos`, `reasoning_content` of
 * earlier turns). `response_format` and `tool_choice` become guided generation
 * (guided-fields.ts); `parallel_tool_calls` is `parallelToolCalls`, and with
 * `--enable-tool-guided-generation` a chat with tools and tool_choice "auto" is tool-guided.
 */

import { isGuidedToolParser } from '../tool-formats/registry.js';
import { normalizeMessages } from '../pipeline/messages.js';
import type { ChatOptions } from '../pipeline/options.js';
import type { ChatMessage, ToolDefinition } from '../text/types.js';
import { badRequest } from './errors.js';
import { isJsonObject, optionalBoolean, optionalInteger, optionalObject, requireObject } from './fields.js';
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
  return { messages: normalizeMessages(body.messages, { openAiRequest: true }), options, ...streamFields(body), topLogprobs: wantLogprobs ? (top ?? 0) : undefined };
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
