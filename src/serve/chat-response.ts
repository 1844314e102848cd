/**
 * weft stream parts -> OpenAI chat responses: `chat.completion.chunk`s for a
 * stream (ChatChunker), one `chat.completion` otherwise (ChatReply).
 * Reasoning goes to `reasoning_content` (vLLM's and OVMS's field); tool calls
 * stream as the parser produces them: the start carries id and name, each
 * delta a piece of the arguments' JSON, which add up to the final arguments.
 */

import { totalUsage } from '../pipeline/results.js';
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
  /** `n`: the request's choices, each opened with its role delta. */
  constructor(
    private readonly ids: ResponseIds,
    private readonly topLogprobs: number | undefined,
    private readonly tokenText: TokenText,
    private readonly n = 1,
  ) {}

  /** The first chunk: the role of every choice, as OpenAI sends it. */
  opening(): object {
    return this.envelope(Array.from({ length: this.n }, (_, index) => ({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null })));
  }

  /** The chunk for one part, or undefined for parts with nothing to send (finish is `closing`). Its choice is the part's. */
  fromPart(part: StreamPart): object | undefined {
    const index = part.choice ?? 0;
    switch (part.type) {
      case 'text-delta':
        return this.chunk(index, { content: part.text });
      case 'reasoning-delta':
        return this.chunk(index, { reasoning_content: part.text });
      case 'tool-call-start':
        return this.chunk(index, { tool_calls: [{ index: part.index, id: part.id, type: 'function', function: { name: part.name, arguments: '' } }] });
      case 'tool-call-delta':
        return this.chunk(index, { tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }] });
      case 'token':
        if (this.topLogprobs === undefined || part.logprobs === undefined) return undefined;
        return this.chunk(index, {}, null, { content: toChatLogprobs(part.logprobs, this.topLogprobs, this.tokenText) });
      default:
        // tool-call: its deltas have said it all; finish: see closing().
        return undefined;
    }
  }

  closing(part: Extract<StreamPart, { type: 'finish' }>): object {
    return this.chunk(part.choice ?? 0, {}, toOpenAiFinishReason(part.finishReason));
  }

  /** The usage chunk of `stream_options.include_usage`: no choices. */
  usage(usage: Usage): object {
    return { ...this.envelope([]), usage: toOpenAiUsage(usage) };
  }

  private chunk(index: number, delta: ChunkDelta, finishReason: string | null = null, logprobs: { content: OpenAiTokenLogprob[] } | null = null): object {
    return this.envelope([{ index, delta, logprobs, finish_reason: finishReason }]);
  }

  private envelope(choices: object[]): object {
    return { id: this.ids.id, object: 'chat.completion.chunk', created: this.ids.created, model: this.ids.model, choices };
  }
}

/** One choice of a whole chat reply, as it is collected. */
interface ChatChoiceState {
  content: string;
  reasoning: string;
  readonly toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  readonly logprobs: TokenLogprobs[];
  finish: Extract<StreamPart, { type: 'finish' }> | undefined;
}

/** Collects a whole reply for a non-streamed chat completion: every choice (n > 1) by its index. */
export class ChatReply {
  private readonly choices: ChatChoiceState[] = [];

  constructor(
    private readonly ids: ResponseIds,
    private readonly topLogprobs: number | undefined,
    private readonly tokenText: TokenText,
  ) {}

  add(part: StreamPart): void {
    const choice = (this.choices[part.choice ?? 0] ??= { content: '', reasoning: '', toolCalls: [], logprobs: [], finish: undefined });
    if (part.type === 'text-delta') choice.content += part.text;
    else if (part.type === 'reasoning-delta') choice.reasoning += part.text;
    else if (part.type === 'tool-call') choice.toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.arguments) } });
    else if (part.type === 'token' && part.logprobs) choice.logprobs.push(...part.logprobs);
    else if (part.type === 'finish') choice.finish = part;
  }

  completion(): object {
    const finishes = this.choices.flatMap((choice) => (choice?.finish === undefined ? [] : [choice.finish]));
    return {
      id: this.ids.id,
      object: 'chat.completion',
      created: this.ids.created,
      model: this.ids.model,
      choices: Array.from(this.choices, (choice, index) => {
        const { content, reasoning, toolCalls, logprobs, finish } = choice ?? { content: '', reasoning: '', toolCalls: [], logprobs: [], finish: undefined };
        const message = {
          role: 'assistant',
          // OpenAI sends null content beside tool calls.
          content: content === '' && toolCalls.length > 0 ? null : content,
          ...(reasoning !== '' && { reasoning_content: reasoning }),
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        };
        return {
          index,
          message,
          logprobs: this.topLogprobs === undefined ? null : { content: toChatLogprobs(logprobs, this.topLogprobs, this.tokenText) },
          finish_reason: finish ? toOpenAiFinishReason(finish.finishReason) : 'stop',
        };
      }),
      // The prompt counted once, every choice's completion tokens.
      ...(finishes.length > 0 && { usage: toOpenAiUsage(totalUsage(finishes.map((finish) => finish.usage))) }),
    };
  }
}
