/**
 * Default parsers from a model's own files. The chat template shows how the
 * model writes a tool call: it renders one assistant message holding a probe
 * call, and the markup around it names the format (each format's
 * `writtenBy`). A `<think>` token in the vocabulary, or a generation prompt
 * that opens a think block, means the model reasons in <think> blocks. A
 * template that cannot render a probe just gives no sign; a template that
 * prints a bare JSON object could be several formats, and then nothing is guessed.
 * The pipeline, the CLI and the server all pick their defaults here.
 */
import type { ChatTemplateRenderOptions } from '../text/chat-template.js';
import type { ChatMessage } from '../text/types.js';
import { TOOL_FORMATS } from './registry.js';

/** Parser names as the options take them; NO_PARSER turns one off. */
export interface ParserNames {
  tool?: string;
  reasoning?: string;
}

/** The name that turns a parser off (`parsers: { tool: 'none' }`, `--tool-parser none`). */
export const NO_PARSER = 'none';

/** What inference may look at: the model's chat template (rendered on the main thread or in the text sandbox) and its vocabulary. */
export interface ModelSigns {
  render(messages: readonly ChatMessage[], options: ChatTemplateRenderOptions): string | Promise<string>;
  hasToken?(text: string): boolean;
}

/** A parser picked for a model, and the sign that picked it ("its chat template writes tool calls in hermes markup"). */
export interface InferredParser {
  parser: string;
  sign: string;
}

const PROBE_TOOL = 'weft_probe_tool';
const THINK = '<think>';
/** The parser used when a model looks like it reasons in <think> blocks (Qwen3, DeepSeek-R1 and their kin). */
export const DEFAULT_REASONING_PARSER = 'qwen3';

async function rendered(model: ModelSigns, messages: ChatMessage[], options: ChatTemplateRenderOptions): Promise<string | undefined> {
  try {
    return await model.render(messages, options);
  } catch {
    // Some templates insist on a system message or other shapes; then we simply do not guess.
    return undefined;
  }
}

/** The format whose markup the template writes a tool call in, among `known` names (default: every built-in one). */
export async function inferToolParser(model: ModelSigns, known?: readonly string[]): Promise<InferredParser | undefined> {
  const text = await rendered(
    model,
    [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: PROBE_TOOL, arguments: { probe: 1 } }] },
    ],
    {
      addGenerationPrompt: false,
      tools: [{ type: 'function', function: { name: PROBE_TOOL, parameters: { type: 'object', properties: { probe: { type: 'integer' } } } } }],
    },
  );
  if (text === undefined) return undefined;
  const format = TOOL_FORMATS.find((f) => (known === undefined || known.includes(f.name)) && f.writtenBy(text, PROBE_TOOL));
  return format && { parser: format.name, sign: `its chat template writes tool calls in ${format.name} markup` };
}

/** qwen3 when the model thinks in <think> blocks. */
export async function inferReasoningParser(model: ModelSigns): Promise<InferredParser | undefined> {
  if (model.hasToken?.(THINK) === true) return { parser: DEFAULT_REASONING_PARSER, sign: 'its tokenizer has a <think> token' };
  const prompt = await rendered(model, [{ role: 'user', content: 'Hi' }], { addGenerationPrompt: true });
  if (prompt?.includes(THINK)) return { parser: DEFAULT_REASONING_PARSER, sign: 'its chat template writes <think>' };
  return undefined;
}

/** The names given win (NO_PARSER included); what they leave open is inferred. */
export async function inferParsers(given: ParserNames | undefined, model: ModelSigns): Promise<ParserNames> {
  const tool = given?.tool ?? (await inferToolParser(model))?.parser;
  const reasoning = given?.reasoning ?? (await inferReasoningParser(model))?.parser;
  return { ...(tool !== undefined && { tool }), ...(reasoning !== undefined && { reasoning }) };
}

/** The parsers that read a reply: later layers win, and NO_PARSER leaves that parser out. */
export function activeParsers(...layers: (ParserNames | undefined)[]): ParserNames {
  const merged: ParserNames = Object.assign({}, ...layers);
  return {
    ...(merged.tool !== undefined && merged.tool !== NO_PARSER && { tool: merged.tool }),
    ...(merged.reasoning !== undefined && merged.reasoning !== NO_PARSER && { reasoning: merged.reasoning }),
  };
}
