/**
 * weft requests -> OpenAI request bodies. weft's option names map to the
 * fields by the table `weft serve` reads them with (pipeline/openai-fields.ts:
 * OpenAI's fields plus the vLLM/OVMS extras); guided generation as
 * `response_format` and `tool_choice` (and `parallel_tool_calls`). Always
 * streamed, with usage.
 */

import type { ResponseFormat, ToolChoice } from '../guided/guide.js';
import { SAMPLING_FIELDS } from '../pipeline/openai-fields.js';
import type { ChatOptions, GenerateOptions } from '../pipeline/options.js';
import type { ChatMessage } from '../text/types.js';

type Body = Record<string, unknown>;

export function chatBody(model: string, messages: readonly ChatMessage[], options: ChatOptions): Body {
  return {
    model,
    messages: messages.map(toOpenAiMessage),
    ...(options.tools && options.tools.length > 0 && { tools: options.tools }),
    ...(options.templateKwargs && { chat_template_kwargs: options.templateKwargs }),
    ...(options.toolChoice !== undefined && { tool_choice: toOpenAiToolChoice(options.toolChoice) }),
    ...(options.parallelToolCalls !== undefined && { parallel_tool_calls: options.parallelToolCalls }),
    ...samplingFields(options),
    ...(options.logprobs !== undefined && options.logprobs > 0 && { logprobs: true, top_logprobs: options.logprobs }),
    stream: true,
    stream_options: { include_usage: true },
  };
}

export function completionBody(model: string, prompt: string | readonly number[], options: GenerateOptions): Body {
  return {
    model,
    prompt: typeof prompt === 'string' ? prompt : [...prompt],
    ...samplingFields(options),
    // OpenAI's completions default is 16 tokens; weft's is "until EOS or the context ends".
    ...(options.maxTokens === undefined && { max_tokens: null }),
    ...(options.logprobs !== undefined && options.logprobs > 0 && { logprobs: options.logprobs }),
    stream: true,
    stream_options: { include_usage: true },
  };
}

/** weft's toolChoice in OpenAI's spelling (a name becomes `{type: 'function', function: {name}}`). */
function toOpenAiToolChoice(choice: ToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

/** weft's responseFormat in OpenAI's spelling (`json_schema` needs a name there). */
function toOpenAiResponseFormat(format: ResponseFormat): unknown {
  if (format.type === 'json_object') return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: format.name ?? 'response', schema: format.schema } };
}

function samplingFields(options: GenerateOptions): Body {
  const fields: Body = {};
  if (options.responseFormat !== undefined) fields.response_format = toOpenAiResponseFormat(options.responseFormat);
  for (const { option, field } of SAMPLING_FIELDS) {
    if (options[option] !== undefined) fields[field] = options[option];
  }
  return fields;
}

function toOpenAiMessage(message: ChatMessage): Body {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content === '' && message.toolCalls?.length ? null : message.content,
        ...(message.reasoning !== undefined && { reasoning_content: message.reasoning }),
        ...(message.toolCalls?.length && {
          tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
        }),
      };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId ?? '', ...(message.name !== undefined && { name: message.name }) };
    default:
      return { role: message.role, content: message.content };
  }
}
