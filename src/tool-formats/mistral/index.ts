/** mistral: `[TOOL_CALLS]` followed by a JSON array of calls (before v11) or `NAME[ARGS]{...}`. */
import type { ToolFormat } from '../format.js';
import { mistralGrammar } from './grammar.js';
import { TOOL_CALLS } from './markers.js';
import { MistralToolStream } from './parser.js';

export const mistral: ToolFormat = {
  name: 'mistral',
  stream: (options) => new MistralToolStream(options),
  grammar: mistralGrammar,
  writtenBy: (rendered) => rendered.includes(TOOL_CALLS),
};
