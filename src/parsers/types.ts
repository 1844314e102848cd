/** Public shapes of the streaming reasoning and tool-call parsers. */
import type { ToolCall, ToolDefinition } from '../text/types.js';

export interface ContentEvent {
  type: 'content';
  text: string;
}
export interface ReasoningEvent {
  type: 'reasoning';
  text: string;
}
export interface ToolCallStartEvent {
  type: 'tool-call-start';
  index: number;
  id: string;
  name: string;
}
export interface ToolCallDeltaEvent {
  type: 'tool-call-delta';
  index: number;
  /** A piece of the call's arguments as JSON text; all pieces of a call concatenate to valid JSON. */
  argumentsDelta: string;
}
export interface ToolCallEndEvent {
  type: 'tool-call-end';
  index: number;
  /** Equal to JSON.parse of the concatenated argumentsDelta's of this call. */
  arguments: Record<string, unknown>;
}

export type ToolEvent = ContentEvent | ToolCallStartEvent | ToolCallDeltaEvent | ToolCallEndEvent;
export type ReasoningStreamEvent = ContentEvent | ReasoningEvent;
export type ParserEvent = ReasoningStreamEvent | ToolEvent;

/** One request's incremental parser: feed deltas of any size, then call end() once. */
export interface ParserStream<E> {
  /** Feeds one text delta; `deltaIds` (the token ids behind it) are accepted for future use and ignored. */
  push(deltaText: string, deltaIds?: readonly number[]): E[];
  /** Flushes what was held back and closes what is open. */
  end(): E[];
  /** What was wrong with the model output so far (empty when it was well formed). */
  readonly warnings: readonly string[];
}

export type ToolStream = ParserStream<ToolEvent>;
export type ReasoningStream = ParserStream<ReasoningStreamEvent>;

/** What a reply held, parsed: the answer text, reasoning, finished tool calls and what was malformed. */
export interface ParseResult {
  /** Text outside reasoning and tool calls; null when there is none. */
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCall[];
  /** What was wrong with the model output (empty when it was well formed). */
  warnings: string[];
}

export interface ToolParseResult {
  /** Text outside tool calls; null when there is none. */
  content: string | null;
  toolCalls: ToolCall[];
  warnings: string[];
}

export interface ReasoningParseResult {
  reasoning: string | null;
  content: string | null;
  warnings: string[];
}

export interface ToolParser {
  readonly name: string;
  parse(text: string): ToolParseResult;
  stream(): ToolStream;
}

export interface ReasoningParser {
  readonly name: string;
  parse(text: string): ReasoningParseResult;
  stream(): ReasoningStream;
}

export interface ToolParserOptions {
  /** The request's tools: names are checked against them and qwen3coder types values by their schemas. */
  tools?: readonly ToolDefinition[];
  /**
   * Id of the call at `index` (0, 1, ... within one stream). Default `call_<index>`: deterministic, so
   * parse() and stream() of the same text agree; pass a generator to make ids unique across requests.
   */
  generateId?: (index: number) => string;
}

export interface ReasoningParserOptions {
  /** The output starts inside a think block (the chat template already emitted `<think>`). */
  startsInReasoning?: boolean;
}

export type ToolParserFactory = (options: ToolParserOptions) => ToolParser;
export type ReasoningParserFactory = (options: ReasoningParserOptions) => ReasoningParser;
