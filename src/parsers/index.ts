// The machinery of streaming reasoning and tool-call parsers (see docs/parsers.md).
export type {
  ContentEvent,
  ParseResult,
  ParserEvent,
  ParserStream,
  ReasoningEvent,
  ReasoningParseResult,
  ReasoningParser,
  ReasoningParserFactory,
  ReasoningParserOptions,
  ReasoningStream,
  ReasoningStreamEvent,
  ToolCallDeltaEvent,
  ToolCallEndEvent,
  ToolCallStartEvent,
  ToolEvent,
  ToolParseResult,
  ToolParser,
  ToolParserFactory,
  ToolParserOptions,
  ToolStream,
} from './types.js';
export { createReasoningParser, reasoningParserNames, registerReasoningParser } from './registry.js';
// Tool parsers are registered with their formats: src/tool-formats/ (exported from the package root).
export { detectStartsInReasoning } from './reasoning/think.js';
export { collectEvents, reasoningParserFromStream, toolParserFromStream } from './collect.js';
export { createParserChain } from './chain.js';
export type { ChainedParsers, ParserChain } from './chain.js';
