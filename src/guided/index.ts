/** Guided generation: grammars that decide which tokens may come next (see docs/guided.md). */
export { Guide, type GuidedRequest, type ResponseFormat, type ToolChoice } from './guide.js';
export { CompiledGrammar, GrammarMatcher, applyMask, type TokenGrammar } from './grammar.js';
export { Vocabulary } from './vocabulary.js';
export { compileSchema } from './json-schema.js';
export { GUIDED_TOOL_PARSERS } from './tool-formats.js';
