/** weft stream parts of a text completion -> `text_completion` objects (streamed chunks or one response). */

import { totalUsage } from '../pipeline/results.js';
import type { StreamPart, TokenLogprobs, Usage } from '../pipeline/stream-parts.js';
import type { ResponseIds } from './chat-response.js';
import { toCompletionLogprobs, toOpenAiFinishReason, toOpenAiUsage, type TokenText } from './usage.js';

export class CompletionChunker {
  /** Per choice: where its next text starts in the choice's text (logprobs' text_offset). */
  private readonly offsets: number[] = [];

  constructor(
    private readonly ids: ResponseIds,
    private readonly logprobs: number | undefined,
    private readonly tokenText: TokenText,
  ) {}

  /** Text parts become chunks; token parts carry logprobs when asked for. Its choice is the part's. */
  fromPart(part: StreamPart): object | undefined {
    const index = part.choice ?? 0;
    if (part.type === 'text-delta') {
      this.offsets[index] = (this.offsets[index] ?? 0) + part.text.length;
      return this.chunk(index, part.text, null, null);
    }
    if (part.type === 'token' && this.logprobs !== undefined && part.logprobs) {
      return this.chunk(index, '', null, toCompletionLogprobs(part.logprobs, this.logprobs, this.tokenText, this.offsets[index] ?? 0));
    }
    return undefined;
  }

  closing(part: Extract<StreamPart, { type: 'finish' }>): object {
    return this.chunk(part.choice ?? 0, '', toOpenAiFinishReason(part.finishReason), null);
  }

  usage(usage: Usage): object {
    return { id: this.ids.id, object: 'text_completion', created: this.ids.created, model: this.ids.model, choices: [], usage: toOpenAiUsage(usage) };
  }

  private chunk(index: number, text: string, finishReason: string | null, logprobs: object | null): object {
    return {
      id: this.ids.id,
      object: 'text_completion',
      created: this.ids.created,
      model: this.ids.model,
      choices: [{ index, text, logprobs, finish_reason: finishReason }],
    };
  }
}

/** One choice of a whole completion, as it is collected. */
interface CompletionChoiceState {
  text: string;
  readonly tokens: TokenLogprobs[];
  finish: Extract<StreamPart, { type: 'finish' }> | undefined;
}

/** Collects a whole completion: every choice (n > 1) by its index. */
export class CompletionReply {
  private readonly choices: CompletionChoiceState[] = [];

  /** `echo`: the prompt text, which then starts each choice's text. */
  constructor(
    private readonly ids: ResponseIds,
    private readonly logprobs: number | undefined,
    private readonly tokenText: TokenText,
    private readonly echo: string,
  ) {}

  add(part: StreamPart): void {
    const choice = (this.choices[part.choice ?? 0] ??= this.emptyChoice());
    if (part.type === 'text-delta') choice.text += part.text;
    else if (part.type === 'token' && part.logprobs) choice.tokens.push(...part.logprobs);
    else if (part.type === 'finish') choice.finish = part;
  }

  completion(): object {
    const finishes = this.choices.flatMap((choice) => (choice?.finish === undefined ? [] : [choice.finish]));
    return {
      id: this.ids.id,
      object: 'text_completion',
      created: this.ids.created,
      model: this.ids.model,
      choices: Array.from(this.choices, (state, index) => {
        const choice = state ?? this.emptyChoice();
        return {
          index,
          text: choice.text,
          logprobs: this.logprobs === undefined ? null : toCompletionLogprobs(choice.tokens, this.logprobs, this.tokenText, this.echo.length),
          finish_reason: choice.finish ? toOpenAiFinishReason(choice.finish.finishReason) : 'stop',
        };
      }),
      // The prompt counted once, every choice's completion tokens.
      ...(finishes.length > 0 && { usage: toOpenAiUsage(totalUsage(finishes.map((finish) => finish.usage))) }),
    };
  }

  private emptyChoice(): CompletionChoiceState {
    return { text: this.echo, tokens: [], finish: undefined };
  }
}
