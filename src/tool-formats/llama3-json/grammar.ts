/**
 * llama3_json calls, in the syntax parser.ts reads: `{"name": "NAME", "parameters": ARGS}`. A call
 * starts at any `{`, or at `<|python_tag|>` (then its object); `;` or whitespace between calls.
 */
import { nameAndArguments } from '../../guided/call-parts.js';
import { Sequence, literalPart } from '../../guided/text-frames.js';
import type { ToolGrammar } from '../../guided/tool-grammar.js';
import { OBJECT_OPEN, PYTHON_TAG } from './markers.js';

export const llama3JsonGrammar: ToolGrammar = {
  // Any object may be a call, so "none" writes no `{` at all.
  callMarkers: [OBJECT_OPEN, PYTHON_TAG],
  call: (tools, indices) => {
    const rest = new Sequence([literalPart('"name": "'), nameAndArguments(tools, indices, 'parameters', '}')]);
    return {
      open: OBJECT_OPEN,
      rest,
      triggers: [{ text: OBJECT_OPEN }, { text: PYTHON_TAG, then: new Sequence([literalPart(OBJECT_OPEN), rest]) }],
      separator: { allowed: '; \n', max: 2 },
    };
  },
};
