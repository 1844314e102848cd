/** hermes: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`. */
import type { ToolFormat } from '../format.js';
import { hermesGrammar } from './grammar.js';
import { OPEN } from './markers.js';
import { HermesToolStream } from './parser.js';

export const hermes: ToolFormat = {
  name: 'hermes',
  stream: (options) => new HermesToolStream(options),
  grammar: hermesGrammar,
  // The tag, then a JSON object that names the tool (a bare `<tool_call>` could open other markup).
  writtenBy: (rendered, probe) => new RegExp(`${OPEN}\\s*\\{[^]*"${probe}"`).test(rendered),
};
