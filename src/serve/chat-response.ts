/**
 * weft stream parts -> OpenAI chat responses: `chat.completion.chunk`s for a
 * stream (ChatChunker), one `chat.completion` otherwise (ChatReply).
 * Reasoning goes to `reasoning_content` (vLLM's and OVMS's field); tool calls
 * stream as the parser produces them: the start carries id and name, each
 * delta a piece of the arguments' JSON, which add up to the final arguments.
 */

import type { StreamPart, TokenLogprobs, Usage } from '../pipeline/stream-parts.js';
import { toChatLogprobs, toOpenAiFinishReason, toOpenAiUsage, type OpenAiTokenLogprob, type TokenText } from './usage.js';

export interface ResponseIds {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  reasoning_content?: string;
  tool_calls?: { index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }[];
}

export class ChatChunker {
  constructor(
    private readonly ids: ResponseIds,
    private readonly topLogprobs: number | undefined,
    private readonly tokenText: TokenText,
  ) {}

  /** The first chunk: the role, as OpenAI sends it. */
  opening(): object {
    return this.chunk({ role: 'assistant', content: '' });
  }

  /** The chunk for one part, or undefined for parts with nothing to send (finish is `closing`). */
  fromPart(part: StreamPart): object | undefined {
    switch (part.type) {
      case 'text-delta':
        return this.chunk({ content: part.text });
      case 'reasoning-delta':
        return this.chunk({ reasoning_content: part.text });
      case 'tool-call-start':
        return this.chunk({ tool_calls: [{ index: part.index, id: part.id, type: 'function', function: { name: part.name, arguments: '' } }] });
      case 'tool-call-delta':
        return this.chunk({ tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }] });
      case 'token':
        if (this.topLogprobs === undefined || part.logprobs === undefined) return undefined;
        return this.chunk({}, null, { content: toChatLogprobs(part.logprobs, this.topLogprobs, this.tokenText) });
      default:
        // tool-call: its deltas have said it all; finish: see closing().
        return undefined;
    }
  }

  closing(part: Extract<StreamPart, { type: 'finish' }>): object {
    return this.chunk({}, toOpenAiFinishReason(part.finishReason));
  }

  /** The usage chunk of `stream_options.include_usage`: no choices. */
  usage(usage: Usage): object {
    return { id: this.ids.id, object: 'chat.completion.chunk', created: this.ids.created, model: this.ids.model, choices: [], usage: toOpenAiUsage(usage) };
  }

  private chunk(delta: ChunkDelta, finishReason: string | null = null, logprobs: { content: OpenAiTokenLogprob[] } | null = null): object {
    return {
      id: this.ids.id,
      object: 'chat.completion.chunk',
      created: this.ids.created,
      model: this.ids.model,
      choices: [{ index: 0, delta, logprobs, finish_reason: finishReason }],
    };
  }
}

/** Collects a whole reply for a non-streamed chat completion. */
export class ChatReply {
  private content = '';
  private reasoning = '';
  private readonly toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  private readonly logprobs: TokenLogprobs[] = [];
  private finish: Extract<StreamPart, { type: 'finish' }> | undefined;

  constructor(
    private readonly ids: ResponseIds,
    private readonly topLogprobs: number | undefined,
    private readonly tokenText: TokenText,
  ) {}

  add(part: StreamPart): void {
    if (part.type === 'text-delta') this.content += part.text;
    else if (part.type === 'reasoning-delta') this.reasoning += part.text;
    else if (part.type === 'tool-call') this.toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.arguments) } });
    else if (part.type === 'token' && part.logprobs) this.logprobs.push(...part.logprobs);
    else if (part.type === 'finish') this.finish = part;
  }

  completion(): object {
    const finish = this.finish;
    const message = {
      role: 'assistant',
      // OpenAI sends null content beside tool calls.
      content: this.content === '' && this.toolCalls.length > 0 ? null : this.content,
      ...(this.reasoning !== '' && { reasoning_content: this.reasoning }),
      ...(this.toolCalls.length > 0 && { tool_calls: this.toolCalls }),
    };
    return {
      id: this.ids.id,
      object: 'chat.completion',
      created: this.ids.created,
      model: this.ids.model,
      choices: [
        {
          index: 0,
          message,
          logprobs: this.topLogprobs === undefined ? null : { content: toChatLogprobs(this.logprobs, this.topLogprobs, this.tokenText) },
          finish_reason: finish ? toOpenAiFinishReason(finish.finishReason) : 'stop',
        },
      ],
      ...(finish && { usage: toOpenAiUsage(finish.usage) }),
    };
  }
}
