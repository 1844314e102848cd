/**
 * What guided generation needs from a tool-call format: one call in the
 * format's own syntax (arguments valid against the tool's schema), how its
 * parser recognises a call's start (triggers), and the markers toolChoice
 * "none" must never write. Each format implements this next to its parser
 * (src/tool-formats/<name>/grammar.ts); call-modes.ts builds what a request
 * runs from it: forced calls ("required", a named tool), tool-guided "auto",
 * parallel calls, reasoning.
 */
import type { ToolDefinition } from '../text/types.js';
import type { Part } from './text-frames.js';

export interface ToolGrammar {
  /** What toolChoice "none" forbids: every text that would start a call, anywhere. */
  readonly callMarkers: readonly string[];
  /**
   * Texts that start a call only at the start of the reply's content (after whitespace, and after
   * `</think>` where a reasoning parser reads the reply). "none" refuses them there. Default: none.
   */
  readonly startMarkers?: readonly string[];
  /** One call to one of `tools[indices]`. Throws InvalidOptionError for a tool that cannot be written. */
  call(tools: readonly ToolDefinition[], indices: readonly number[], options: CallOptions): CallGrammar;
}

/** What a format's grammar may depend on besides the tools. */
export interface CallOptions {
  /** More than one call per reply: formats whose calls are one list (`holdsAllCalls`) then allow more than one element. */
  readonly parallel: boolean;
  /** The texts of the vocabulary's special tokens (a format may write another syntax when one of its markers is a token). */
  readonly specialTexts: ReadonlySet<string>;
}

/** One call in a format's syntax, restricted to some tools. */
export interface CallGrammar {
  /** The literal that opens a call (a choice lead next to `<think>`). */
  readonly open: string;
  /** Everything after it, up to the end of the call. */
  readonly rest: Part;
  /**
   * Tool-guided "auto": the texts at which the parser starts reading a call. Default: each of the
   * format's call markers that `open` starts with, anywhere in the text, followed by the rest of
   * `open` and `rest`. A call marker that is not a trigger is refused in free text.
   */
  readonly triggers?: readonly CallTrigger[];
  /** Between parallel calls of a forced reply: up to `max` characters of `allowed`. Default: up to 2 newlines. */
  readonly separator?: { readonly allowed: string; readonly max: number };
  /**
   * The call is a list (`[a(), b()]`, a calls block) that holds every call of the reply, more
   * than one when `CallOptions.parallel`: nothing is added after it.
   */
  readonly holdsAllCalls?: boolean;
}

export interface CallTrigger {
  readonly text: string;
  /** 'anywhere' (default), or 'start': only at the start of the reply's content, after whitespace. */
  readonly at?: 'anywhere' | 'start';
  /** What follows the trigger, up to the end of the call. Default: the rest of `open` (which must start with `text`), then `rest`. */
  readonly then?: Part;
}
