/**
 * Parser registries: built-in formats are registered here, users add their own under new names
 * (or replace a built-in one). Unknown names are an InvalidOptionError that lists the known ones.
 */
import { InvalidOptionError } from '../errors.js';
import { reasoningParserFromStream, toolParserFromStream } from './collect.js';
import { DEEPSEEK_R1_THINK, QWEN3_THINK, ThinkStream } from './reasoning/think.js';
import { DeepseekV3ToolStream } from './tools/deepseek-v3.js';
import { HermesToolStream } from './tools/hermes.js';
import { Llama3JsonToolStream } from './tools/llama3-json.js';
import { MistralToolStream } from './tools/mistral.js';
import { PythonicToolStream } from './tools/pythonic.js';
import { Qwen3CoderToolStream } from './tools/qwen3coder.js';
import type {
  ReasoningParser,
  ReasoningParserFactory,
  ReasoningParserOptions,
  ToolParser,
  ToolParserFactory,
  ToolParserOptions,
  ToolStream,
} from './types.js';

const toolParsers = new Map<string, ToolParserFactory>();
const reasoningParsers = new Map<string, ReasoningParserFactory>();

function checkName(option: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) throw new InvalidOptionError(option, 'a parser name must be a non-empty string');
}

export function registerToolParser(name: string, factory: ToolParserFactory): void {
  checkName('parsers.tool', name);
  if (typeof factory !== 'function') throw new InvalidOptionError('parsers.tool', `the factory for "${name}" must be a function`);
  toolParsers.set(name, factory);
}

export function registerReasoningParser(name: string, factory: ReasoningParserFactory): void {
  checkName('parsers.reasoning', name);
  if (typeof factory !== 'function') throw new InvalidOptionError('parsers.reasoning', `the factory for "${name}" must be a function`);
  reasoningParsers.set(name, factory);
}

export const toolParserNames = (): string[] => [...toolParsers.keys()];
export const reasoningParserNames = (): string[] => [...reasoningParsers.keys()];

export function createToolParser(name: string, options: ToolParserOptions = {}): ToolParser {
  checkName('parsers.tool', name);
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

export function createReasoningParser(name: string, options: ReasoningParserOptions = {}): ReasoningParser {
  checkName('parsers.reasoning', name);
  const factory = reasoningParsers.get(name);
  if (!factory) {
    throw new InvalidOptionError('parsers.reasoning', `unknown reasoning parser "${name}" (known: ${reasoningParserNames().join(', ')})`);
  }
  if (options.startsInReasoning !== undefined && typeof options.startsInReasoning !== 'boolean') {
    throw new InvalidOptionError('startsInReasoning', 'must be a boolean');
  }
  return factory(options);
}

const builtInTools: Record<string, new (options: ToolParserOptions) => ToolStream> = {
  qwen3coder: Qwen3CoderToolStream,
  hermes: HermesToolStream,
  llama3_json: Llama3JsonToolStream,
  mistral: MistralToolStream,
  pythonic: PythonicToolStream,
  deepseek_v3: DeepseekV3ToolStream,
};
for (const [name, Stream] of Object.entries(builtInTools)) {
  registerToolParser(name, (options) => toolParserFromStream(name, () => new Stream(options)));
}

// deepseek_r1 templates open the think block in the prompt, so its output starts inside it by default.
registerReasoningParser('qwen3', (options) =>
  reasoningParserFromStream('qwen3', () => new ThinkStream(QWEN3_THINK, options.startsInReasoning ?? false)),
);
registerReasoningParser('deepseek_r1', (options) =>
  reasoningParserFromStream('deepseek_r1', () => new ThinkStream(DEEPSEEK_R1_THINK, options.startsInReasoning ?? true)),
);
