/** Tool-call formats: one folder each (parser, grammar, markers) and their registry (see docs/parsers.md). */
export { createToolParser, registerToolParser, toolParserNames, GUIDED_TOOL_PARSERS } from './registry.js';
