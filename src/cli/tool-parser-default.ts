import type { ChatMessage, ToolDefinition } from '../text/types.js';
import type { CliPipeline } from './pipeline-port.js';

const PROBE_TOOL = 'weft_probe_tool';

/**
 * How each built-in tool parser's markup shows in a rendered tool call, most
 * specific first. Only formats with a marker of their own are here: a template
 * that prints a bare JSON object could be several formats, and then we do not guess.
 */
const SIGNS: readonly { parser: string; marker: RegExp }[] = [
  { parser: 'qwen3coder', marker: new RegExp(`<function=${PROBE_TOOL}>`) },
  { parser: 'deepseek_v3', marker: /<｜tool▁call▁begin｜>/ },
  { parser: 'mistral', marker: /\[TOOL_CALLS\]/ },
  { parser: 'llama3_json', marker: /<\|python_tag\|>/ },
  { parser: 'hermes', marker: new RegExp(`<tool_call>\\s*\\{[^]*"${PROBE_TOOL}"`) },
  { parser: 'pythonic', marker: new RegExp(`\\[${PROBE_TOOL}\\(`) },
];

/**
 * The tool parser this model's chat template writes calls for, with the reason,
 * or undefined. The template renders one assistant message holding a probe call;
 * the markup around it names the format. Nothing is loaded or run, and a template
 * that cannot render the probe just counts as "no sign".
 */
export function toolCallFormat(pipeline: CliPipeline, known: readonly string[]): { parser: string; sign: string } | undefined {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: PROBE_TOOL, arguments: { probe: 1 } }] },
  ];
  const tools: ToolDefinition[] = [{ type: 'function', function: { name: PROBE_TOOL, parameters: { type: 'object', properties: { probe: { type: 'integer' } } } } }];
  let rendered: string | undefined;
  try {
    rendered = pipeline.chatTemplate?.render(messages, { addGenerationPrompt: false, tools });
  } catch {
    return undefined;
  }
  if (rendered === undefined) return undefined;
  for (const { parser, marker } of SIGNS) {
    if (known.includes(parser) && marker.test(rendered)) return { parser, sign: `its chat template writes tool calls in ${parser} markup` };
  }
  return undefined;
}
