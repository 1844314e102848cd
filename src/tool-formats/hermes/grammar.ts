/** hermes calls, in the syntax parser.ts reads: `<tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>`. */
import { nameAndArguments } from '../../guided/call-parts.js';
import { Sequence, literalPart } from '../../guided/text-frames.js';
import type { ToolGrammar } from '../../guided/tool-grammar.js';
import { CLOSE, OPEN } from './markers.js';

export const hermesGrammar: ToolGrammar = {
  callMarkers: [OPEN],
  call: (tools, indices) => ({
    open: `${OPEN}\n`,
    rest: new Sequence([literalPart('{"name": "'), nameAndArguments(tools, indices, 'arguments', `}\n${CLOSE}`)]),
  }),
};
