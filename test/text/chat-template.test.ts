import { describe, expect, it } from 'vitest';
import { ChatTemplateError } from '../../src/errors.js';
import { ChatTemplate, templatesFromConfig, toHfMessage } from '../../src/text/chat-template.js';
import type { ChatMessage, ToolDefinition } from '../../src/text/types.js';

// A Qwen3-style template written for this test: tools listed as JSON lines in the
// system turn, reasoning in <think>, tool calls in the qwen3coder format (arguments
// read as a mapping), consecutive tool results grouped into one user turn.
const QWEN3_STYLE = `
{%- if tools %}
{{- '<|im_start|>system\\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}
{{- '# Tools\\n<tools>' }}
{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}
{{- '\\n</tools><|im_end|>\\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' %}
{{- '<|im_start|>user\\n' + message.content + '<|im_end|>\\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\\n' }}
{%- if message.reasoning_content is defined %}{{- '<think>\\n' + message.reasoning_content + '\\n</think>\\n\\n' }}{%- endif %}
{{- message.content }}
{%- if message.tool_calls %}
{%- for call in message.tool_calls %}
{{- '\\n<tool_call>\\n<function=' + call.function.name + '>\\n' }}
{%- for key, value in call.function.arguments | items %}
{{- '<parameter=' + key + '>\\n' }}{%- if value is string %}{{- value }}{%- else %}{{- value | tojson }}{%- endif %}{{- '\\n</parameter>\\n' }}
{%- endfor %}
{{- '</function>\\n</tool_call>' }}
{%- endfor %}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}
{%- endif %}`;

const tools: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, days: { type: 'integer' } },
        required: ['city'],
      },
    },
  },
  { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
];

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Oslo for 2 days, and the time?' },
  {
    role: 'assistant',
    content: '',
    reasoning: 'Two tools are needed.',
    toolCalls: [
      { id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo', days: 2 } },
      { id: 'call_2', name: 'now', arguments: {} },
    ],
  },
  { role: 'tool', content: '{"temp": -3}', toolCallId: 'call_1', name: 'get_weather' },
  { role: 'tool', content: '12:00', toolCallId: 'call_2', name: 'now' },
];

describe('ChatTemplate with a Qwen3-style template', () => {
  const template = new ChatTemplate(QWEN3_STYLE);

  it('renders system+tools, user, assistant tool calls, grouped tool results and the generation prompt', () => {
    const rendered = template.render(conversation, { tools });
    const expectedHead = '<|im_start|>system\nYou are terse.\n\n# Tools\n<tools>';
    expect(rendered.startsWith(expectedHead)).toBe(true);

    // Tool definitions come out as JSON, one per line, equal to what we passed.
    const toolBlock = rendered.slice(expectedHead.length, rendered.indexOf('\n</tools>'));
    const parsedTools = toolBlock.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(parsedTools).toEqual(tools);
    expect(parsedTools).toHaveLength(2);

    const afterTools = rendered.slice(rendered.indexOf('\n</tools>'));
    expect(afterTools).toBe(
      '\n</tools><|im_end|>\n' +
        // The system message is consumed by the tools header, but the loop still sees it (and skips it).
        '<|im_start|>user\nWeather in Oslo for 2 days, and the time?<|im_end|>\n' +
        '<|im_start|>assistant\n<think>\nTwo tools are needed.\n</think>\n\n' +
        '\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>' +
        '\n<tool_call>\n<function=now>\n</function>\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n{"temp": -3}\n</tool_response>\n<tool_response>\n12:00\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n',
    );
  });

  it('passes extra kwargs (enable_thinking) and honours addGenerationPrompt: false', () => {
    const user: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    expect(template.render(user, { kwargs: { enable_thinking: false } })).toBe(
      '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
    expect(template.render(user, { addGenerationPrompt: false })).toBe('<|im_start|>user\nhi<|im_end|>\n');
  });

  it('without tools renders a plain system turn (tools: [] counts as none)', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
    ];
    const expected = '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n';
    expect(template.render(messages)).toBe(expected);
    expect(template.render(messages, { tools: [] })).toBe(expected);
  });

  it('does not let the template mutate the caller\'s messages or tools', () => {
    const before = structuredClone({ conversation, tools });
    template.render(conversation, { tools });
    expect({ conversation, tools }).toEqual(before);
  });
});

describe('toHfMessage', () => {
  it('converts our message to the Hugging Face shape, leaving absent fields absent', () => {
    expect(toHfMessage({ role: 'user', content: 'x' })).toEqual({ role: 'user', content: 'x' });
    expect(toHfMessage(conversation[2] as ChatMessage)).toEqual({
      role: 'assistant',
      content: '',
      reasoning_content: 'Two tools are needed.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo', days: 2 } } },
        { id: 'call_2', type: 'function', function: { name: 'now', arguments: {} } },
      ],
    });
    expect(toHfMessage(conversation[3] as ChatMessage)).toEqual({
      role: 'tool',
      content: '{"temp": -3}',
      tool_call_id: 'call_1',
      name: 'get_weather',
    });
  });
});

describe('ChatTemplate selection and errors', () => {
  it('exposes bos_token and eos_token', () => {
    const template = new ChatTemplate('{{ bos_token }}|{{ messages[0].content }}|{{ eos_token }}', {
      bosToken: '<s>',
      eosToken: '</s>',
    });
    expect(template.render([{ role: 'user', content: 'hey' }])).toBe('<s>|hey|</s>');
  });

  it('picks "tool_use" when tools are given, "default" otherwise, or a named one', () => {
    const templates = templatesFromConfig({
      chat_template: [
        { name: 'default', template: 'plain' },
        { name: 'tool_use', template: 'tools:{{ tools | length }}' },
        { name: 'rag', template: 'rag' },
      ],
    });
    const template = new ChatTemplate(templates!);
    expect(template.names).toEqual(['default', 'tool_use', 'rag']);
    expect(template.render([])).toBe('plain');
    expect(template.render([], { tools })).toBe('tools:2');
    expect(template.render([], { templateName: 'rag' })).toBe('rag');
    expect(() => template.render([], { templateName: 'nope' })).toThrow(ChatTemplateError);
  });

  it('reads chat_template as a string, and nothing when absent', () => {
    expect(templatesFromConfig({ chat_template: 'x' })).toEqual(new Map([['default', 'x']]));
    expect(templatesFromConfig({})).toBeUndefined();
    expect(() => templatesFromConfig({ chat_template: 42 })).toThrow(ChatTemplateError);
  });

  it('a syntax error is a ChatTemplateError on first use (and from validate())', () => {
    const template = new ChatTemplate('{% for m in messages %}{{ m.content }');
    expect(() => template.validate()).toThrow(ChatTemplateError);
    expect(() => template.render([{ role: 'user', content: 'x' }])).toThrow(/syntax error/);
  });

  it('raise_exception and runtime errors are ChatTemplateErrors', () => {
    const strict = new ChatTemplate(
      "{% if messages[0].role != 'user' %}{{ raise_exception('first message must be from the user') }}{% endif %}ok",
    );
    expect(strict.render([{ role: 'user', content: 'x' }])).toBe('ok');
    expect(() => strict.render([{ role: 'assistant', content: 'x' }])).toThrow(ChatTemplateError);
    expect(() => strict.render([{ role: 'assistant', content: 'x' }])).toThrow(/first message must be from the user/);

    const broken = new ChatTemplate('{{ messages[0].content.nope() }}');
    expect(() => broken.render([{ role: 'user', content: 'x' }])).toThrow(ChatTemplateError);
  });
});
