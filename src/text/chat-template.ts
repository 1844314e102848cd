import { Template } from '@huggingface/jinja';
import { ChatTemplateError, InvalidOptionError } from '../errors.js';
import type { ChatMessage, ToolDefinition } from './types.js';

export interface ChatTemplateRenderOptions {
  tools?: readonly ToolDefinition[];
  /** End the prompt with the assistant turn's opening (default true: we are about to generate it). */
  addGenerationPrompt?: boolean;
  /** Extra template variables, e.g. { enable_thinking: false }. */
  kwargs?: Record<string, unknown>;
  /** Pick a named template (tokenizer_config.json may list several). */
  templateName?: string;
}

/** The message shape Hugging Face chat templates read. */
export interface HfChatMessage {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: Record<string, unknown> } }[];
  tool_call_id?: string;
  name?: string;
}

/**
 * A model's chat template(s), rendered with @huggingface/jinja. Templates are
 * compiled on first use, so a template our Jinja cannot parse only fails chat(),
 * never plain generation.
 */
export class ChatTemplate {
  private readonly sources: ReadonlyMap<string, string>;
  private readonly compiled = new Map<string, Template>();

  /** `templates`: one template, or named ones ("default", "tool_use", ...). */
  constructor(
    templates: string | ReadonlyMap<string, string>,
    private readonly specialTokens: { bosToken?: string; eosToken?: string } = {},
  ) {
    if (typeof templates !== 'string' && (templates === null || typeof templates !== 'object' || typeof (templates as Partial<ReadonlyMap<string, string>>).entries !== 'function')) {
      throw new InvalidOptionError(
        'templates',
        `expected a template string or a Map of named templates (new Map([['default', text], ['tool_use', text]])), got ${templates === null ? 'null' : typeof templates}`,
      );
    }
    for (const [name, source] of typeof templates === 'string' ? [] : templates) {
      if (typeof source !== 'string') throw new InvalidOptionError(`templates.${String(name)}`, `expected the template's text, got ${typeof source}`);
    }
    this.sources = typeof templates === 'string' ? new Map([['default', templates]]) : templates;
    if (this.sources.size === 0) throw new ChatTemplateError('no chat template given');
  }

  get names(): string[] {
    return [...this.sources.keys()];
  }

  /** Renders the conversation to the prompt text (special tokens included as text). */
  render(messages: readonly ChatMessage[], options: ChatTemplateRenderOptions = {}): string {
    const template = this.template(this.pickName(options));
    const tools = options.tools && options.tools.length > 0 ? options.tools : undefined;
    const context: Record<string, unknown> = {
      ...options.kwargs,
      messages: messages.map(toHfMessage),
      add_generation_prompt: options.addGenerationPrompt ?? true,
      bos_token: this.specialTokens.bosToken ?? '',
      eos_token: this.specialTokens.eosToken ?? '',
    };
    // transformers passes tools=None when there are none; templates test `if tools`.
    if (tools) context.tools = tools.map((tool) => structuredClone(tool));
    try {
      return template.render(context);
    } catch (error) {
      throw new ChatTemplateError(`chat template failed while rendering: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Compiles every template now, so a bad one is reported at once. */
  validate(): void {
    for (const name of this.sources.keys()) this.template(name);
  }

  private pickName(options: ChatTemplateRenderOptions): string {
    if (options.templateName !== undefined) {
      if (!this.sources.has(options.templateName)) {
        throw new ChatTemplateError(
          `no chat template named ${JSON.stringify(options.templateName)} (the model has: ${this.names.join(', ')})`,
        );
      }
      return options.templateName;
    }
    // As transformers does: a "tool_use" template when tools are given, else "default".
    if (options.tools && options.tools.length > 0 && this.sources.has('tool_use')) return 'tool_use';
    if (this.sources.has('default')) return 'default';
    if (this.sources.size === 1) return this.names[0] as string;
    throw new ChatTemplateError(
      `the model has several chat templates and none is named "default" (${this.names.join(', ')}): pass templateName`,
    );
  }

  private template(name: string): Template {
    const cached = this.compiled.get(name);
    if (cached) return cached;
    const source = this.sources.get(name);
    if (source === undefined) throw new ChatTemplateError(`no chat template named ${JSON.stringify(name)}`);
    let template: Template;
    try {
      template = new Template(source);
    } catch (error) {
      throw new ChatTemplateError(`chat template "${name}" has a syntax error: ${(error as Error).message}`, {
        cause: error,
      });
    }
    this.compiled.set(name, template);
    return template;
  }
}

/** Our ChatMessage in the shape templates expect; absent fields stay absent so `is defined` tests work. */
export function toHfMessage(message: ChatMessage): HfChatMessage {
  const out: HfChatMessage = { role: message.role, content: message.content };
  if (message.reasoning !== undefined) out.reasoning_content = message.reasoning;
  if (message.toolCalls && message.toolCalls.length > 0) {
    out.tool_calls = message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: structuredClone(call.arguments) },
    }));
  }
  if (message.toolCallId !== undefined) out.tool_call_id = message.toolCallId;
  if (message.name !== undefined) out.name = message.name;
  return out;
}

/**
 * The chat template(s) a tokenizer_config.json declares: `chat_template` as a
 * string, or a list of { name, template }. Undefined when it has none.
 */
export function templatesFromConfig(config: Record<string, unknown>, file = 'tokenizer_config.json'): Map<string, string> | undefined {
  const value = config.chat_template;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return new Map([['default', value]]);
  if (Array.isArray(value)) {
    const templates = new Map<string, string>();
    for (const entry of value) {
      const { name, template } = (entry ?? {}) as { name?: unknown; template?: unknown };
      if (typeof name !== 'string' || typeof template !== 'string') {
        throw new ChatTemplateError(`${file}: each chat_template entry must be { "name": string, "template": string }`);
      }
      templates.set(name, template);
    }
    return templates.size > 0 ? templates : undefined;
  }
  throw new ChatTemplateError(`${file}: chat_template must be a string or a list of { name, template }`);
}

/** The error chat() gives for a model without a chat template. */
export function requireChatTemplate(template: ChatTemplate | undefined, modelDir?: string): ChatTemplate {
  if (template) return template;
  const where = modelDir ? `the model in ${modelDir}` : 'this model';
  throw new ChatTemplateError(
    `${where} has no chat template (no chat_template in tokenizer_config.json and no chat_template.jinja): ` +
      'use generate() with a plain prompt instead of chat()',
  );
}
