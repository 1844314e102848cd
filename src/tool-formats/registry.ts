/**
 * The tool-call formats weft ships, one row each, and the tool parser
 * registry: every built-in format is registered under its name, users add
 * their own parsers under new names (or replace a built-in one). Unknown
 * names are an InvalidOptionError that lists the known ones. A format is a
 * folder next to this file (format.ts says what one holds).
 */
import { InvalidOptionError } from '../errors.js';
import type { ToolGrammar } from '../guided/tool-grammar.js';
import { toolParserFromStream } from '../parsers/collect.js';
import { checkParserName } from '../parsers/registry.js';
import type { ToolParser, ToolParserFactory, ToolParserOptions } from '../parsers/types.js';
import { deepseekV3 } from './deepseek-v3/index.js';
import type { ToolFormat } from './format.js';
import { hermes } from './hermes/index.js';
import { llama3Json } from './llama3-json/index.js';
import { mistral } from './mistral/index.js';
import { pythonic } from './pythonic/index.js';
import { qwen3coder } from './qwen3coder/index.js';

/** The built-in formats, in the order their names are listed. */
export const TOOL_FORMATS: readonly ToolFormat[] = [qwen3coder, hermes, llama3Json, mistral, pythonic, deepseekV3];

/** The tool parsers that have grammars (every built-in one); others refuse toolChoice "required", a named tool, "none" and guidedTools. */
export const GUIDED_TOOL_PARSERS: readonly string[] = TOOL_FORMATS.map((format) => format.name);

export function isGuidedToolParser(name: string): boolean {
  return GUIDED_TOOL_PARSERS.includes(name);
}

/** The grammar of a tool parser's format; an InvalidOptionError on `option` when it has none. */
export function toolGrammarOf(parser: string, option = 'toolChoice'): ToolGrammar {
  const format = TOOL_FORMATS.find((f) => f.name === parser);
  if (format === undefined) throw new InvalidOptionError(option, `the ${parser} tool parser has no guided grammar yet (guided: ${GUIDED_TOOL_PARSERS.join(', ')})`);
  return format.grammar;
}

const toolParsers = new Map<string, ToolParserFactory>();

export function registerToolParser(name: string, factory: ToolParserFactory): void {
  checkParserName('parsers.tool', name);
  if (typeof factory !== 'function') throw new InvalidOptionError('parsers.tool', `the factory for "${name}" must be a function`);
  toolParsers.set(name, factory);
}

export const toolParserNames = (): string[] => [...toolParsers.keys()];

export function createToolParser(name: string, options: ToolParserOptions = {}): ToolParser {
  checkParserName('parsers.tool', name);
  const factory = toolParsers.get(name);
  if (!factory) throw new InvalidOptionError('parsers.tool', `unknown tool parser "${name}" (known: ${toolParserNames().join(', ')})`);
  if (options.tools !== undefined && !Array.isArray(options.tools)) throw new InvalidOptionError('tools', 'must be an array of tool definitions');
  for (const tool of options.tools ?? []) {
    if (typeof tool?.function?.name !== 'string') throw new InvalidOptionError('tools', 'every tool needs a function.name');
  }
  if (options.generateId !== undefined && typeof options.generateId !== 'function') {
    throw new InvalidOptionError('generateId', 'must be a function');
  }
  return factory(options);
}

for (const format of TOOL_FORMATS) {
  registerToolParser(format.name, (options) => toolParserFromStream(format.name, () => format.stream(options)));
}
