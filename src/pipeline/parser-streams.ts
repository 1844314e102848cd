/** Creates one request's chained parser stream from the parser names in its options. */
import { randomBytes } from 'node:crypto';
import type { ParserOptions } from './options.js';
import { createOutputParser } from '../parsers/chain.js';
import { detectStartsInReasoning } from '../parsers/reasoning/think.js';
import { createReasoningParser, createToolParser } from '../parsers/registry.js';
import type { ParserEvent, ParserStream } from '../parsers/types.js';
import type { ToolDefinition } from '../text/types.js';

/**
 * `promptText` is the rendered prompt: when the template already opened a
 * think block, the output starts inside reasoning. Unknown names throw
 * InvalidOptionError (from the registry).
 */
export function createParserStream(
  names: ParserOptions,
  tools: readonly ToolDefinition[],
  promptText: string,
): ParserStream<ParserEvent> | undefined {
  if (names.tool === undefined && names.reasoning === undefined) return undefined;
  // Call ids unique across requests (the parser's default, call_<i>, is only unique within one).
  const prefix = `call_${randomBytes(6).toString('hex')}_`;
  const reasoning =
    names.reasoning === undefined ? null : createReasoningParser(names.reasoning, { startsInReasoning: detectStartsInReasoning(promptText) });
  const tool = names.tool === undefined ? null : createToolParser(names.tool, { tools, generateId: (index) => `${prefix}${index}` });
  return createOutputParser({ reasoning, tool }).stream();
}
