/**
 * Prompt preparation: text or token ids for a completion, messages rendered by
 * the chat template for a chat. Checked here, so a bad prompt fails before
 * anything is queued.
 */

import { InvalidOptionError } from '../errors.js';
import { requireChatTemplate, type ChatTemplate } from '../text/chat-template.js';
import type { Tokenizer, ToolDefinition } from '../text/types.js';
import { normalizeMessages } from './messages.js';
import type { ChatOptions } from './options.js';

/** A request's prompt as token ids, with what its reply parsers need to know. */
export interface PreparedPrompt {
  readonly promptTokenIds: number[];
  /** The prompt as text (undefined for token ids): tells whether the template opened a think block. */
  readonly promptText: string | undefined;
  readonly tools: readonly ToolDefinition[];
}

/** A chat (an array of message objects) rather than a completion prompt (text or token ids). */
export function isChatInput(input: unknown): boolean {
  return Array.isArray(input) && input.length > 0 && input.every((m) => m !== null && typeof m === 'object');
}

/** A completion prompt: text (encoded with the tokenizer's special tokens) or token ids used as they are. */
export function preparePrompt(prompt: unknown, tokenizer: Tokenizer, vocabSize: number): PreparedPrompt {
  if (typeof prompt === 'string') {
    const promptTokenIds = tokenizer.encode(prompt);
    if (promptTokenIds.length === 0) throw new InvalidOptionError('prompt', 'the prompt encodes to no tokens');
    return { promptTokenIds, promptText: prompt, tools: [] };
  }
  if (Array.isArray(prompt) && prompt.length === 0) throw new InvalidOptionError('prompt', 'the prompt has no tokens');
  if (!Array.isArray(prompt) || prompt.some((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize)) {
    throw new InvalidOptionError('prompt', `expected a string or an array of token ids below ${vocabSize}`);
  }
  return { promptTokenIds: [...(prompt as number[])], promptText: undefined, tools: [] };
}

/** A chat: the messages checked and rendered with the generation prompt. `modelDir` names the model in errors. */
export function prepareChat(
  messages: unknown,
  options: ChatOptions,
  template: ChatTemplate | undefined,
  tokenizer: Tokenizer,
  modelDir: string | undefined,
): PreparedPrompt {
  const normalized = normalizeMessages(messages);
  const promptText = requireChatTemplate(template, modelDir).render(normalized, {
    ...(options.tools && { tools: options.tools }),
    addGenerationPrompt: true,
    ...(options.templateKwargs && { kwargs: options.templateKwargs }),
  });
  // The template writes BOS itself when the model wants one.
  const promptTokenIds = tokenizer.encode(promptText, { addSpecialTokens: false });
  return { promptTokenIds, promptText, tools: options.tools ?? [] };
}
