/** Guided generation: grammars that decide which tokens may come next (see docs/guided.md). */
export { Guide, type GuidedRequest, type ResponseFormat, type ToolChoice } from './guide.js';
export { CompiledGrammar, GrammarMatcher, applyMask, type TokenGrammar } from './grammar.js';
export { Vocabulary } from './vocabulary.js';
export { compileSchema } from './json-schema.js';
export type { CallGrammar, CallOptions, CallTrigger, ToolGrammar } from './tool-grammar.js';
// Which tool parsers have grammars: GUIDED_TOOL_PARSERS in src/tool-formats/.
