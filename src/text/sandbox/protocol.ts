/** Messages between the text sandbox (text-sandbox.ts) and its worker (worker-entry.ts). */

import type { ChatTemplateRenderOptions } from '../chat-template.js';
import type { ChatMessage } from '../types.js';

/** What the worker builds its tokenizer and templates from: the model folder's text files, already read. */
export interface TextSource {
  /** tokenizer.json as read (parsed in the worker). */
  readonly tokenizerText: string;
  readonly tokenizerConfig: Record<string, unknown>;
  readonly extraEosTokenIds: readonly number[] | undefined;
  /** For error messages. */
  readonly file: string;
  /** Named templates, or undefined when the model has none. */
  readonly templates: readonly (readonly [string, string])[] | undefined;
  readonly specialTokens: { readonly bosToken?: string; readonly eosToken?: string };
}

export type TextJob =
  | { readonly id: number; readonly kind: 'encode'; readonly text: string; readonly addSpecialTokens: boolean }
  | {
      readonly id: number;
      readonly kind: 'render';
      readonly messages: readonly ChatMessage[];
      readonly options: ChatTemplateRenderOptions;
      /** A longer rendering cannot fit the model: the worker refuses it rather than send it back. */
      readonly maxChars: number;
    };

/** The error codes a job can end with (those of WeftError subclasses). */
export type TextJobErrorCode = 'CHAT_TEMPLATE_ERROR' | 'TOKENIZER_ERROR' | 'PROMPT_TOO_LONG';

export type TextReply =
  | { readonly kind: 'ready' }
  | { readonly kind: 'startup-failed'; readonly message: string }
  | { readonly kind: 'done'; readonly id: number; readonly value: string | number[] }
  | { readonly kind: 'failed'; readonly id: number; readonly code: TextJobErrorCode; readonly message: string };
