/**
 * weft requests -> OpenAI request bodies. weft's option names map to the
 * OpenAI fields, plus the vLLM/OVMS extras those servers accept (`top_k`,
 * `min_p`, `repetition_penalty`, `ignore_eos`, `stop_token_ids`,
 * `chat_template_kwargs`); guided generation as `response_format` and
 * `tool_choice` (and `parallel_tool_calls`). Always streamed, with usage.
 */

import type { ChatMessage, ChatOptions, GenerateOptions, ResponseFormat, ToolChoice } from '../index.js';

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
  const set = (name: string, value: unknown): void => {
    if (value !== undefined) fields[name] = value;
  };
  set('max_tokens', options.maxTokens);
  set('temperature', options.temperature);
  set('top_p', options.topP);
  set('top_k', options.topK);
  set('min_p', options.minP);
  set('repetition_penalty', options.repetitionPenalty);
  set('presence_penalty', options.presencePenalty);
  set('frequency_penalty', options.frequencyPenalty);
  set('seed', options.seed);
  set('stop', options.stop);
  set('stop_token_ids', options.stopTokenIds);
  set('ignore_eos', options.ignoreEos);
  set('skip_special_tokens', options.skipSpecialTokens);
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
