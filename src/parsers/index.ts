// Streaming reasoning and tool-call parsers (see docs/parsers.md).
export type {
  ContentEvent,
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
export {
  createReasoningParser,
  createToolParser,
  reasoningParserNames,
  registerReasoningParser,
  registerToolParser,
  toolParserNames,
} from './registry.js';
export { detectStartsInReasoning } from './reasoning/think.js';
export { collectEvents, reasoningParserFromStream, toolParserFromStream } from './collect.js';
export type { CollectedOutput } from './collect.js';
export { createOutputParser } from './chain.js';
export type { OutputParseResult, OutputParser, OutputParsers } from './chain.js';
