/** pythonic: a Python list of calls, `[f(a=1, b="x"), g()]`. */
import type { ToolFormat } from '../format.js';
import { pythonicGrammar } from './grammar.js';
import { LIST_OPEN } from './markers.js';
import { PythonicToolStream } from './parser.js';

export const pythonic: ToolFormat = {
  name: 'pythonic',
  stream: (options) => new PythonicToolStream(options),
  grammar: pythonicGrammar,
  writtenBy: (rendered, probe) => rendered.includes(`${LIST_OPEN}${probe}(`),
};
