/** Chat messages in weft's shape and in the OpenAI shapes people copy: the same prompt, or a clear error. */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import type { ChatInputMessage } from '../../src/pipeline/messages.js';
import { ChatTemplate } from '../../src/text/chat-template.js';
import type { ChatMessage } from '../../src/text/types.js';
import { harness, type Harness } from '../support/harness.js';

/** Renders every field a message can carry, so a dropped or mangled field shows in the prompt. */
const TEMPLATE = new ChatTemplate(
  '{% for m in messages %}<|{{ m.role }}|>{{ m.content }}' +
    '{% if m.reasoning_content %}(thought {{ m.reasoning_content }}){% endif %}' +
    '{% if m.tool_calls %}{% for c in m.tool_calls %}[call {{ c.id }} {{ c.function.name }} {{ c.function.arguments | tojson }}]{% endfor %}{% endif %}' +
    '{% if m.tool_call_id %}(answers {{ m.tool_call_id }}){% endif %}{% if m.name %}(from {{ m.name }}){% endif %};{% endfor %}' +
    '{% if add_generation_prompt %}<|assistant|>{% endif %}',
);

const WEFT: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris?\nIn Celsius.' },
  { role: 'assistant', content: '', reasoning: 'I need the tool.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
  { role: 'tool', content: '{"temp": 21}', toolCallId: 'call_1', name: 'get_weather' },
];

const OPENAI: ChatInputMessage[] = [
  { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
  { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }, { type: 'text', text: 'In Celsius.' }] },
  {
    role: 'assistant',
    content: null,
    reasoning_content: 'I need the tool.',
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
  },
  { role: 'tool', content: '{"temp": 21}', tool_call_id: 'call_1', name: 'get_weather' },
];

let open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.map((h) => h.pipe.close()));
  open = [];
});

/** The prompt the backend was given for one chat. */
async function promptOf(messages: readonly ChatInputMessage[]): Promise<string> {
  const h = await harness({ chatTemplate: TEMPLATE });
  open.push(h);
  h.backend.recordBatches = true;
  await h.pipe.chat(messages, { maxTokens: 1, temperature: 0 });
  return h.tokenizer.decode([...h.backend.steps[0]!.inputIds]);
}

async function rejection(messages: unknown): Promise<InvalidOptionError> {
  const h = await harness({ chatTemplate: TEMPLATE });
  open.push(h);
  const error = await h.pipe.chat(messages as ChatInputMessage[], { maxTokens: 1 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidOptionError);
  expect(h.pipe.stats().requests.started).toBe(0);
  return error as InvalidOptionError;
}

describe('chat messages', () => {
  it('OpenAI-shaped messages render exactly the prompt of the same conversation in weft shape', async () => {
    const weft = await promptOf(WEFT);
    expect(weft).toBe(
      '<|system|>Be brief.;<|user|>Weather in Paris?\nIn Celsius.;' +
        '<|assistant|>(thought I need the tool.)[call call_1 get_weather {"city": "Paris"}];' +
        '<|tool|>{"temp": 21}(answers call_1)(from get_weather);<|assistant|>',
    );
    expect(await promptOf(OPENAI)).toBe(weft);
  });

  it('weft tool calls may also carry OpenAI arguments as JSON text', async () => {
    const mixed = WEFT.map((m) => (m.toolCalls ? { ...m, toolCalls: undefined, tool_calls: [{ id: 'call_1', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] } : m));
    expect(await promptOf(mixed as ChatInputMessage[])).toBe(await promptOf(WEFT));
  });

  it('an unknown role is refused, naming the message', async () => {
    const error = await rejection([{ role: 'developer', content: 'hi' }]);
    expect(error.option).toBe('messages[0].role');
    expect(error.message).toContain('expected "system", "user", "assistant" or "tool", got "developer"');
  });

  it('a non-text content part is refused, not rendered as [object Object]', async () => {
    const error = await rejection([{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'x' } }] }]);
    expect(error.option).toBe('messages[0].content[1]');
    expect(error.message).toContain('"image_url" parts are not supported');
  });

  it('malformed tool calls and misspelt fields are refused', async () => {
    const badArguments = await rejection([{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{city:' } }] }]);
    expect(badArguments.option).toBe('messages[0].tool_calls[0].function.arguments');
    const misspelt = await rejection([{ role: 'tool', content: '1', toolCallID: 'c' }]);
    expect(misspelt.option).toBe('messages[0].toolCallID');
    expect(misspelt.message).toContain('did you mean "toolCallId"?');
    expect((await rejection([{ role: 'user', content: 42 }])).option).toBe('messages[0].content');
    expect((await rejection([{ role: 'user', content: null }])).option).toBe('messages[0].content');
    expect((await rejection([])).option).toBe('messages');
    expect((await rejection([{ role: 'user', content: 'x', toolCalls: [{ id: 'c', name: 'f', arguments: {} }] }])).option).toBe('messages[0].toolCalls');
  });

  it('fields OpenAI responses leave null are ignored', async () => {
    const withNulls = [{ role: 'user', content: 'hi', refusal: null, audio: null }];
    expect(await promptOf(withNulls as unknown as ChatInputMessage[])).toBe('<|user|>hi;<|assistant|>');
  });
});
