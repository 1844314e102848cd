/** weft stream parts of a text completion -> `text_completion` objects (streamed chunks or one response). */

import type { StreamPart, TokenLogprobs, Usage } from '../pipeline/stream-parts.js';
import type { ResponseIds } from './chat-response.js';
import { toCompletionLogprobs, toOpenAiFinishReason, toOpenAiUsage, type TokenText } from './usage.js';

export class CompletionChunker {
  private offset = 0;

  constructor(
    private readonly ids: ResponseIds,
    private readonly logprobs: number | undefined,
    private readonly tokenText: TokenText,
  ) {}

  /** Text parts become chunks; token parts carry logprobs when asked for. */
  fromPart(part: StreamPart): object | undefined {
    if (part.type === 'text-delta') {
      this.offset += part.text.length;
      return this.chunk(part.text, null, null);
    }
    if (part.type === 'token' && this.logprobs !== undefined && part.logprobs) {
      return this.chunk('', null, toCompletionLogprobs(part.logprobs, this.logprobs, this.tokenText, this.offset));
    }
    return undefined;
  }

  closing(part: Extract<StreamPart, { type: 'finish' }>): object {
    return this.chunk('', toOpenAiFinishReason(part.finishReason), null);
  }

  usage(usage: Usage): object {
    return { id: this.ids.id, object: 'text_completion', created: this.ids.created, model: this.ids.model, choices: [], usage: toOpenAiUsage(usage) };
  }

  private chunk(text: string, finishReason: string | null, logprobs: object | null): object {
    return {
      id: this.ids.id,
      object: 'text_completion',
      created: this.ids.created,
      model: this.ids.model,
      choices: [{ index: 0, text, logprobs, finish_reason: finishReason }],
    };
  }
}

export class CompletionReply {
  private text: string;
  private readonly tokens: TokenLogprobs[] = [];
  private finish: Extract<StreamPart, { type: 'finish' }> | undefined;

  /** `echo`: the prompt text, which then starts the choice's text. */
  constructor(
    private readonly ids: ResponseIds,
    private readonly logprobs: number | undefined,
    private readonly tokenText: TokenText,
    private readonly echo: string,
  ) {
    this.text = echo;
  }

  add(part: StreamPart): void {
    if (part.type === 'text-delta') this.text += part.text;
    else if (part.type === 'token' && part.logprobs) this.tokens.push(...part.logprobs);
    else if (part.type === 'finish') this.finish = part;
  }

  completion(): object {
    const finish = this.finish;
    return {
      id: this.ids.id,
      object: 'text_completion',
      created: this.ids.created,
      model: this.ids.model,
      choices: [
        {
          index: 0,
          text: this.text,
          logprobs: this.logprobs === undefined ? null : toCompletionLogprobs(this.tokens, this.logprobs, this.tokenText, this.echo.length),
          finish_reason: finish ? toOpenAiFinishReason(finish.finishReason) : 'stop',
        },
      ],
      ...(finish && { usage: toOpenAiUsage(finish.usage) }),
    };
  }
}
