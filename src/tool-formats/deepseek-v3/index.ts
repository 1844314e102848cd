/** deepseek_v3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME ... <｜tool▁calls▁end｜>`. */
import type { ToolFormat } from '../format.js';
import { deepseekV3Grammar } from './grammar.js';
import { CALL_BEGIN } from './markers.js';
import { DeepseekV3ToolStream } from './parser.js';

export const deepseekV3: ToolFormat = {
  name: 'deepseek_v3',
  stream: (options) => new DeepseekV3ToolStream(options),
  grammar: deepseekV3Grammar,
  writtenBy: (rendered) => rendered.includes(CALL_BEGIN),
};
