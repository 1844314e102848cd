/**
 * Picks default parsers from the model's chat template when the command line
 * names none: the template shows how the model writes a tool call, so we
 * render one probe call and look at its markup. A template that cannot render
 * the probe just yields no guess.
 */

import type { ParserOptions } from '../pipeline/options.js';
import type { ChatMessage } from '../text/types.js';

export interface TemplateSource {
  readonly tokenizer?: { tokenToId(token: string): number | undefined };
  readonly chatTemplate?: { render(messages: readonly ChatMessage[], options?: object): string } | undefined;
}

const PROBE = 'weft_probe_tool';

/** The tool parser the template's tool-call markup matches, if any. */
export function inferToolParser(source: TemplateSource): string | undefined {
  let text: string;
  try {
    text =
      source.chatTemplate?.render(
        [
          { role: 'user', content: 'probe' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: PROBE, arguments: { x: 1 } }] },
        ],
        {
          tools: [{ type: 'function', function: { name: PROBE, parameters: { type: 'object', properties: { x: { type: 'integer' } } } } }],
          addGenerationPrompt: false,
        },
      ) ?? '';
  } catch {
    return undefined;
  }
  if (text.includes(`<function=${PROBE}>`)) return 'qwen3coder';
  if (new RegExp(`<tool_call>\\s*\\{\\s*"name":\\s*"${PROBE}"`).test(text)) return 'hermes';
  if (text.includes('[TOOL_CALLS]')) return 'mistral';
  if (text.includes('<｜tool▁calls▁begin｜>')) return 'deepseek_v3';
  return undefined;
}

/** qwen3 when the model thinks in <think> blocks (a <think> token, or a template that writes one). */
export function inferReasoningParser(source: TemplateSource): string | undefined {
  if (source.tokenizer?.tokenToId('<think>') !== undefined) return 'qwen3';
  try {
    if (source.chatTemplate?.render([{ role: 'user', content: 'Hi' }], { addGenerationPrompt: true }).includes('<think>')) return 'qwen3';
  } catch {
    // No sign.
  }
  return undefined;
}

/** Flags win; what they leave open is inferred. 'none' turns a parser off. */
export function chooseParsers(flags: ParserOptions, source: TemplateSource): ParserOptions {
  const tool = flags.tool ?? inferToolParser(source);
  const reasoning = flags.reasoning ?? inferReasoningParser(source);
  return {
    ...(tool !== undefined && tool !== 'none' && { tool }),
    ...(reasoning !== undefined && reasoning !== 'none' && { reasoning }),
  };
}
