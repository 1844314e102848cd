/**
 * Where a pipeline's prompts become text and token ids. A model folder's
 * tokenizer and chat template are untrusted: they run in the text sandbox
 * (src/text/sandbox/), bounded in time and memory, off the event loop. A
 * tokenizer and template the user passed in are the user's own code and run
 * inline.
 */

import { PromptTooLongError } from '../errors.js';
import type { ChatTemplate, ChatTemplateRenderOptions } from '../text/chat-template.js';
import type { ChatMessage, Tokenizer } from '../text/types.js';

export interface PromptText {
  readonly hasChatTemplate: boolean;
  encode(text: string, addSpecialTokens: boolean): Promise<number[]>;
  /** Longer than `maxChars` is a PromptTooLongError. */
  render(messages: readonly ChatMessage[], options: ChatTemplateRenderOptions, maxChars: number): Promise<string>;
  close(): Promise<void>;
}

/** The user's own tokenizer and template, called on the main thread. */
export function inlinePromptText(tokenizer: Tokenizer, template: ChatTemplate | undefined): PromptText {
  return {
    hasChatTemplate: template !== undefined,
    encode: async (text, addSpecialTokens) => tokenizer.encode(text, { addSpecialTokens }),
    render: async (messages, options, maxChars) => {
      const text = template!.render(messages, options);
      if (text.length > maxChars) throw new PromptTooLongError(`the chat template rendered ${text.length} characters, more than the model's context can hold (${maxChars})`);
      return text;
    },
    close: async () => {},
  };
}
