/**
 * LangChain messages as weft ChatMessages: system / human / ai (text,
 * reasoning in `additional_kwargs.reasoning_content`, `tool_calls`) / tool
 * (`tool_call_id`). weft models read text, so non-text content blocks fail
 * the call with InvalidOptionError rather than being dropped.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { InvalidOptionError } from '../errors.js';
import type { ChatMessage, ToolCall } from '../text/types.js';

export function toChatMessages(messages: readonly BaseMessage[]): ChatMessage[] {
  return messages.map((message, m) => {
    const content = textOf(message, m);
    switch (message.type) {
      case 'system':
      case 'developer':
        return { role: 'system', content };
      case 'human':
        return { role: 'user', content };
      case 'ai': {
        const ai = message as BaseMessage & { tool_calls?: { id?: string; name: string; args: Record<string, unknown> }[] };
        const reasoning = message.additional_kwargs?.reasoning_content;
        const toolCalls: ToolCall[] = (ai.tool_calls ?? []).map((call, i) => ({ id: call.id ?? `call_${m}_${i}`, name: call.name, arguments: call.args }));
        return {
          role: 'assistant',
          content,
          ...(typeof reasoning === 'string' && reasoning.length > 0 && { reasoning }),
          ...(toolCalls.length > 0 && { toolCalls }),
        };
      }
      case 'tool': {
        const tool = message as BaseMessage & { tool_call_id?: string };
        return { role: 'tool', content, ...(tool.tool_call_id !== undefined && { toolCallId: tool.tool_call_id }), ...(message.name !== undefined && { name: message.name }) };
      }
      default:
        throw new InvalidOptionError(`messages[${m}]`, `weft has no role for a "${message.type}" message`);
    }
  });
}

function textOf(message: BaseMessage, m: number): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((block) => {
      if (block.type === 'text' && typeof block.text === 'string') return block.text;
      throw new InvalidOptionError(`messages[${m}]`, `weft models read text only: ${block.type} content is not supported`);
    })
    .join('');
}
