/** qwen3coder: `<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>`. */
import type { ToolFormat } from '../format.js';
import { qwen3coderGrammar } from './grammar.js';
import { FUNCTION, NAME_END } from './markers.js';
import { Qwen3CoderToolStream } from './parser.js';

export const qwen3coder: ToolFormat = {
  name: 'qwen3coder',
  stream: (options) => new Qwen3CoderToolStream(options),
  grammar: qwen3coderGrammar,
  writtenBy: (rendered, probe) => rendered.includes(`${FUNCTION}${probe}${NAME_END}`),
};
