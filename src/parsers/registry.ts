/**
 * The reasoning parser registry: built-in formats are registered here, users add their own under
 * new names (or replace a built-in one). Unknown names are an InvalidOptionError that lists the
 * known ones. Tool parsers have their registry with their formats (src/tool-formats/registry.ts).
 */
import { InvalidOptionError } from '../errors.js';
import { reasoningParserFromStream } from './collect.js';
import { DEEPSEEK_R1_THINK, QWEN3_THINK, ThinkStream } from './reasoning/think.js';
import type { ReasoningParser, ReasoningParserFactory, ReasoningParserOptions } from './types.js';

const reasoningParsers = new Map<string, ReasoningParserFactory>();

/** Refuses a parser name that is not a non-empty string (`option`: where it was given). */
export function checkParserName(option: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) throw new InvalidOptionError(option, 'a parser name must be a non-empty string');
}

export function registerReasoningParser(name: string, factory: ReasoningParserFactory): void {
  checkParserName('parsers.reasoning', name);
  if (typeof factory !== 'function') throw new InvalidOptionError('parsers.reasoning', `the factory for "${name}" must be a function`);
  reasoningParsers.set(name, factory);
}

export const reasoningParserNames = (): string[] => [...reasoningParsers.keys()];

export function createReasoningParser(name: string, options: ReasoningParserOptions = {}): ReasoningParser {
  checkParserName('parsers.reasoning', name);
  const factory = reasoningParsers.get(name);
  if (!factory) {
    throw new InvalidOptionError('parsers.reasoning', `unknown reasoning parser "${name}" (known: ${reasoningParserNames().join(', ')})`);
  }
  if (options.startsInReasoning !== undefined && typeof options.startsInReasoning !== 'boolean') {
    throw new InvalidOptionError('startsInReasoning', 'must be a boolean');
  }
  return factory(options);
}

// deepseek_r1 templates open the think block in the prompt, so its output starts inside it by default.
registerReasoningParser('qwen3', (options) =>
  reasoningParserFromStream('qwen3', () => new ThinkStream(QWEN3_THINK, options.startsInReasoning ?? false)),
);
registerReasoningParser('deepseek_r1', (options) =>
  reasoningParserFromStream('deepseek_r1', () => new ThinkStream(DEEPSEEK_R1_THINK, options.startsInReasoning ?? true)),
);
