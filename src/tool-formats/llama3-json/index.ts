/** llama3_json: `{"name": ..., "parameters": {...}}` objects, optionally behind `<|python_tag|>`. */
import type { ToolFormat } from '../format.js';
import { llama3JsonGrammar } from './grammar.js';
import { PYTHON_TAG } from './markers.js';
import { Llama3JsonToolStream } from './parser.js';

export const llama3Json: ToolFormat = {
  name: 'llama3_json',
  stream: (options) => new Llama3JsonToolStream(options),
  grammar: llama3JsonGrammar,
  // A bare JSON object could be several formats: only the tag tells.
  writtenBy: (rendered) => rendered.includes(PYTHON_TAG),
};
