/**
 * Prompt preparation: text or token ids for a completion, messages rendered by
 * the chat template for a chat. What can be checked at once is checked at once
 * (token ids, messages, sizes), so a bad prompt fails before anything is
 * queued; encoding and rendering then run where `PromptText` says (the text
 * sandbox for a model folder's files) and settle later.
 */

import { ChatTemplateError, InvalidOptionError, PromptTooLongError, TokenizerError } from '../errors.js';
import { requireChatTemplate } from '../text/chat-template.js';
import type { ChatMessage, Tokenizer, ToolDefinition } from '../text/types.js';
import { normalizeMessages } from './messages.js';
import type { ResolvedRequestOptions } from './options.js';
import type { PromptText } from './prompt-text.js';

/** A request's prompt as token ids, with what its reply parsers need to know. */
export interface PreparedPrompt {
  readonly promptTokenIds: number[];
  /** The prompt as text (undefined for token ids): tells whether the template opened a think block. */
  readonly promptText: string | undefined;
  readonly tools: readonly ToolDefinition[];
}

/** Sizes past which a prompt is refused before it is encoded or rendered. */
export interface PromptLimits {
  /** Characters of text (a prompt, or a chat's rendering) that could still fit the context. */
  readonly maxChars: number;
  readonly maxMessages: number;
}

/** Most messages in one chat. Not implied by the context (a template may drop messages); a bound on the work a request can ask for. */
export const MAX_MESSAGES = 10_000;

/**
 * Every token covers at most `longestTokenLength` characters, so a text of more
 * than context x longest characters cannot fit. The factor 4 leaves room for
 * normalisers that compose characters (NFC turns up to 3-4 code units into one).
 * Without a known longest token (a user's tokenizer) only the message count is bounded.
 */
export function promptLimits(contextTokens: number, tokenizer: Tokenizer): PromptLimits {
  const longest = tokenizer.longestTokenLength;
  return { maxChars: longest === undefined ? Infinity : contextTokens * longest * 4, maxMessages: MAX_MESSAGES };
}

/** A chat (an array of message objects) rather than a completion prompt (text or token ids). */
export function isChatInput(input: unknown): boolean {
  return Array.isArray(input) && input.length > 0 && input.every((m) => m !== null && typeof m === 'object');
}

/** A completion prompt: text (encoded with the tokenizer's special tokens) or token ids used as they are. */
export function preparePrompt(prompt: unknown, text: PromptText, vocabSize: number, limits: PromptLimits): () => Promise<PreparedPrompt> {
  if (typeof prompt === 'string') {
    if (prompt.length > limits.maxChars) throw tooManyChars('the prompt', prompt.length, limits);
    return async () => {
      const promptTokenIds = checkEncoded(await text.encode(prompt, true), vocabSize, 'prompt');
      if (promptTokenIds.length === 0) throw new InvalidOptionError('prompt', 'the prompt encodes to no tokens');
      return { promptTokenIds, promptText: prompt, tools: [] };
    };
  }
  if (Array.isArray(prompt) && prompt.length === 0) throw new InvalidOptionError('prompt', 'the prompt has no tokens');
  if (!Array.isArray(prompt)) throw new InvalidOptionError('prompt', `expected a string or an array of token ids below ${vocabSize}`);
  // An index loop, not some(): some() skips the holes of a sparse array ([1, , 3], new Array(5)).
  for (let i = 0; i < prompt.length; i++) {
    const id: unknown = prompt[i];
    if (!Number.isInteger(id) || (id as number) < 0 || (id as number) >= vocabSize)
      throw new InvalidOptionError(`prompt[${i}]`, `expected a token id in [0, ${vocabSize}), got ${i in prompt ? String(id) : 'a hole'}`);
  }
  const prepared: PreparedPrompt = { promptTokenIds: Array.from(prompt as number[]), promptText: undefined, tools: [] };
  return async () => prepared;
}

/** A chat: the messages checked and rendered with the generation prompt. `modelDir` names the model in errors. */
export function prepareChat(
  messages: unknown,
  options: Pick<ResolvedRequestOptions, 'tools' | 'templateKwargs'>,
  text: PromptText,
  vocabSize: number,
  limits: PromptLimits,
  modelDir: string | undefined,
): () => Promise<PreparedPrompt> {
  if (Array.isArray(messages) && messages.length > limits.maxMessages) {
    throw new InvalidOptionError('messages', `at most ${limits.maxMessages} messages, got ${messages.length}`);
  }
  const normalized = normalizeMessages(messages);
  const chars = messageChars(normalized);
  if (chars > limits.maxChars) throw tooManyChars("the messages' text", chars, limits);
  if (!text.hasChatTemplate) requireChatTemplate(undefined, modelDir);
  return async () => {
    const renderOptions = {
      ...(options.tools && { tools: options.tools }),
      addGenerationPrompt: true,
      ...(options.templateKwargs && { kwargs: options.templateKwargs }),
    };
    const promptText = await text.render(normalized, renderOptions, limits.maxChars);
    // The template writes BOS itself when the model wants one.
    const promptTokenIds = checkEncoded(await text.encode(promptText, false), vocabSize, 'messages');
    if (promptTokenIds.length === 0) throw new ChatTemplateError('the chat template rendered an empty prompt for these messages');
    return { promptTokenIds, promptText, tools: options.tools ?? [] };
  };
}

function messageChars(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) chars += message.content.length + (message.reasoning?.length ?? 0);
  return chars;
}

function tooManyChars(what: string, chars: number, limits: PromptLimits): PromptTooLongError {
  return new PromptTooLongError(`${what} has ${chars} characters: more than the model's context can hold (${limits.maxChars}), refused before tokenizing`);
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
