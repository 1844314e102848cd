/** Creates a request's parser streams from parser names (filled in when the parser registry lands). */
import type { ReasoningStream, ToolStream } from './parsers/types.js';
import type { ParserOptions } from './options.js';
import type { ToolDefinition } from './text/types.js';

export function createParserStreams(
  _names: ParserOptions,
  _tools: readonly ToolDefinition[],
  _promptText: string,
): { reasoning?: ReasoningStream; tool?: ToolStream } {
  return {};
}
