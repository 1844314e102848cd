/**
 * Prompt preparation: text or token ids for a completion, messages rendered by
 * the chat template for a chat. Checked here, so a bad prompt fails before
 * anything is queued.
 */

import { InvalidOptionError, TokenizerError } from '../errors.js';
import { requireChatTemplate, type ChatTemplate } from '../text/chat-template.js';
import type { Tokenizer, ToolDefinition } from '../text/types.js';
import { normalizeMessages } from './messages.js';
import type { ResolvedRequestOptions } from './options.js';

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
    const promptTokenIds = checkEncoded(tokenizer.encode(prompt), vocabSize, 'prompt');
    if (promptTokenIds.length === 0) throw new InvalidOptionError('prompt', 'the prompt encodes to no tokens');
    return { promptTokenIds, promptText: prompt, tools: [] };
  }
  if (Array.isArray(prompt) && prompt.length === 0) throw new InvalidOptionError('prompt', 'the prompt has no tokens');
  if (!Array.isArray(prompt)) throw new InvalidOptionError('prompt', `expected a string or an array of token ids below ${vocabSize}`);
  // An index loop, not some(): some() skips the holes of a sparse array ([1, , 3], new Array(5)).
  for (let i = 0; i < prompt.length; i++) {
    const id: unknown = prompt[i];
    if (!Number.isInteger(id) || (id as number) < 0 || (id as number) >= vocabSize)
      throw new InvalidOptionError(`prompt[${i}]`, `expected a token id in [0, ${vocabSize}), got ${i in prompt ? String(id) : 'a hole'}`);
  }
  return { promptTokenIds: Array.from(prompt as number[]), promptText: undefined, tools: [] };
}

/** A chat: the messages checked and rendered with the generation prompt. `modelDir` names the model in errors. */
export function prepareChat(
  messages: unknown,
  options: Pick<ResolvedRequestOptions, 'tools' | 'templateKwargs'>,
  template: ChatTemplate | undefined,
  tokenizer: Tokenizer,
  vocabSize: number,
  modelDir: string | undefined,
): PreparedPrompt {
  const normalized = normalizeMessages(messages);
  const promptText = requireChatTemplate(template, modelDir).render(normalized, {
    ...(options.tools && { tools: options.tools }),
    addGenerationPrompt: true,
    ...(options.templateKwargs && { kwargs: options.templateKwargs }),
  });
  // The template writes BOS itself when the model wants one.
  const promptTokenIds = checkEncoded(tokenizer.encode(promptText, { addSpecialTokens: false }), vocabSize, 'messages');
  return { promptTokenIds, promptText, tools: options.tools ?? [] };
}

/**
 * Every id a tokenizer made must be one the model has: a step holds only valid
 * input, so one bad prompt fails alone, at submission, never a whole batch.
 */
function checkEncoded(ids: number[], vocabSize: number, what: string): number[] {
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize)
      throw new TokenizerError(`${what}: the tokenizer produced token id ${id}, outside the model's vocabulary of ${vocabSize}`);
  }
  return ids;
}
