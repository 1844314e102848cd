/**
 * The AI SDK's prompt (LanguageModelV3Prompt: system / user / assistant / tool
 * messages made of parts) as weft ChatMessages, the shape chat templates read.
 *
 * It also takes the AI SDK's user-facing ModelMessages (`ai`'s `messages`), whose
 * user and assistant content may be a plain string, so an app can render the
 * same history it keeps for generateText with weft's Pipeline directly.
 *
 * weft models read text: file parts fail the call with InvalidOptionError
 * rather than being dropped, so the model never answers a question it was not
 * shown. Tool results go back as one `tool` message per result, in order.
 */

import type {
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  SharedV3Warning,
} from '@ai-sdk/provider';
import { InvalidOptionError } from '../errors.js';
import type { ChatMessage, ToolCall } from '../text/types.js';

export interface ConvertedPrompt {
  readonly messages: ChatMessage[];
  readonly warnings: SharedV3Warning[];
}

/** A prompt message, or a ModelMessage whose user / assistant content is a plain string. */
export type AiSdkMessage =
  | LanguageModelV3Prompt[number]
  | { role: 'user' | 'assistant'; content: string; providerOptions?: unknown };

export function toChatMessages(prompt: readonly AiSdkMessage[]): ConvertedPrompt {
  if (!Array.isArray(prompt) || prompt.length === 0) throw new InvalidOptionError('prompt', 'expected a non-empty array of messages');
  const messages: ChatMessage[] = [];
  const warnings: SharedV3Warning[] = [];
  prompt.forEach((message, m) => {
    if ((message.role === 'user' || message.role === 'assistant') && typeof message.content === 'string') {
      messages.push({ role: message.role, content: message.content });
      return;
    }
    message = message as LanguageModelV3Prompt[number];
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const texts: string[] = [];
        for (const part of message.content) {
          if (part.type === 'text') texts.push(part.text);
          else throw unsupportedPart(m, part.type, 'mediaType' in part ? part.mediaType : undefined);
        }
        messages.push({ role: 'user', content: texts.join('\n') });
        break;
      }
      case 'assistant': {
        let content = '';
        let reasoning = '';
        const toolCalls: ToolCall[] = [];
        const results: ChatMessage[] = [];
        for (const part of message.content) {
          if (part.type === 'text') content += part.text;
          else if (part.type === 'reasoning') reasoning += part.text;
          else if (part.type === 'tool-call') toolCalls.push({ id: part.toolCallId, name: part.toolName, arguments: toolInput(m, part.input) });
          // A provider-executed tool's result: weft executes none, but keep it for the model.
          else if (part.type === 'tool-result') results.push(toolMessage(part.toolCallId, part.toolName, part.output));
          else throw unsupportedPart(m, part.type, 'mediaType' in part ? part.mediaType : undefined);
        }
        messages.push({
          role: 'assistant',
          content,
          ...(reasoning.length > 0 && { reasoning }),
          ...(toolCalls.length > 0 && { toolCalls }),
        });
        messages.push(...results);
        break;
      }
      case 'tool':
        for (const part of message.content) {
          if (part.type === 'tool-result') messages.push(toolMessage(part.toolCallId, part.toolName, part.output));
          // Approvals belong to provider-executed tools, which weft has none of.
          else warnings.push({ type: 'other', message: `prompt[${m}]: a ${part.type} part was ignored (weft executes no tools itself)` });
        }
        break;
      default:
        throw new InvalidOptionError(`prompt[${m}].role`, `unknown role ${JSON.stringify((message as { role: unknown }).role)}`);
    }
  });
  return { messages, warnings };
}

function toolMessage(toolCallId: string, toolName: string, output: LanguageModelV3ToolResultOutput): ChatMessage {
  return { role: 'tool', content: toolResultText(output), toolCallId, name: toolName };
}

/**
 * A tool result as the text the model reads. JSON results are written with
 * JSON.stringify, the form tool-calling models (the demo model among them) learnt.
 */
export function toolResultText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return JSON.stringify({ error: 'execution denied', ...(output.reason !== undefined && { reason: output.reason }) });
    case 'content':
      return output.value
        .map((item) => {
          if (item.type === 'text') return item.text;
          throw new InvalidOptionError('prompt', `weft models read text only: a tool result's ${item.type} part is not supported`);
        })
        .join('\n');
  }
}

/** The AI SDK hands earlier tool inputs back as parsed objects; weft's messages want objects too. */
function toolInput(m: number, input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new InvalidOptionError(`prompt[${m}]`, `a tool call's input is a string that is not JSON: ${JSON.stringify(input).slice(0, 80)}`);
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionError(`prompt[${m}]`, 'a tool call input must be a JSON object');
  }
  return value as Record<string, unknown>;
}

function unsupportedPart(m: number, type: string, mediaType: string | undefined): InvalidOptionError {
  const what = mediaType === undefined ? `${type} parts` : `${type} parts (${mediaType})`;
  return new InvalidOptionError(`prompt[${m}]`, `weft models read text only: ${what} are not supported`);
}
