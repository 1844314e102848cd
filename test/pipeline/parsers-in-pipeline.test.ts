/** chat() and stream() with reasoning and tool-call parsers, over a backend that replays a scripted answer. */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import type { StreamPart } from '../../src/pipeline/stream-parts.js';
import { ChatTemplate } from '../../src/text/chat-template.js';
import type { ToolDefinition } from '../../src/text/types.js';
import { TOOL_CALLS } from '../support/byte-tokenizer.js';
import { harness, type Harness } from '../support/harness.js';
import { scriptedRule } from '../support/scripted.js';

const TEMPLATE = new ChatTemplate(
  '{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}' +
    '{% if tools %}<|tools|>{% for t in tools %}{{ t.function.name }};{% endfor %}\n{% endif %}' +
    '{% if add_generation_prompt %}<|assistant|><think>\n{% endif %}',
);

const TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' }, metric: { type: 'boolean' } } },
    },
  },
];

const ANSWER =
  'The user wants the weather in Paris, so I call the tool.\n</think>\n\n' +
  '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n' +
  '<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call>';

let open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.map((h) => h.pipe.close()));
  open = [];
});

async function scripted(script: string | readonly number[], extra: Parameters<typeof harness>[0] = {}): Promise<Harness> {
  const h = await harness({
    chatTemplate: TEMPLATE,
    parsers: { tool: 'qwen3coder', reasoning: 'qwen3' },
    backend: { rule: scriptedRule('<|assistant|><think>\n', script) },
    ...extra,
  });
  open.push(h);
  return h;
}

describe('parsers in the pipeline', () => {
  const messages = [{ role: 'user' as const, content: 'Weather in Paris for 3 days?' }];

  it('chat() splits reasoning, content and typed tool calls, and finishes with tool_calls', async () => {
    const h = await scripted(ANSWER);
    const result = await h.pipe.chat(messages, { tools: TOOLS, temperature: 0 });
    expect(result.reasoning).toBe('The user wants the weather in Paris, so I call the tool.');
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ name: 'get_weather', arguments: { city: 'Paris', days: 3, metric: true } });
    expect(result.toolCalls[0]!.id).toMatch(/^call_/);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.text).toBe(ANSWER);
    expect(result.warnings).toEqual([]);
  });

  it('stream() yields reasoning, tool-call parts whose deltas add up to the arguments, then finish', async () => {
    const h = await scripted(ANSWER);
    const parts: StreamPart[] = [];
    for await (const part of h.pipe.stream(messages, { tools: TOOLS, temperature: 0 })) parts.push(part);
    const reasoning = parts.filter((p) => p.type === 'reasoning-delta').map((p) => (p as { text: string }).text).join('');
    expect(reasoning).toBe('The user wants the weather in Paris, so I call the tool.');
    const start = parts.find((p) => p.type === 'tool-call-start');
    expect(start).toMatchObject({ name: 'get_weather', index: 0 });
    const deltas = parts.filter((p) => p.type === 'tool-call-delta').map((p) => (p as { argumentsDelta: string }).argumentsDelta).join('');
    expect(JSON.parse(deltas)).toEqual({ city: 'Paris', days: 3, metric: true });
    const call = parts.find((p) => p.type === 'tool-call');
    expect(call).toMatchObject({ name: 'get_weather', arguments: { city: 'Paris', days: 3, metric: true } });
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool_calls' });
    // Order: reasoning first, then the call.
    expect(parts.findIndex((p) => p.type === 'reasoning-delta')).toBeLessThan(parts.indexOf(start!));
  });

  it("the 'request-finish' event reports the finish reason the result and the finish part report", async () => {
    const h = await scripted(ANSWER);
    const events: string[] = [];
    h.pipe.on('request-finish', ({ finishReason }) => events.push(finishReason));
    const result = await h.pipe.chat(messages, { tools: TOOLS, temperature: 0 });
    const parts: StreamPart[] = [];
    for await (const part of h.pipe.stream(messages, { tools: TOOLS, temperature: 0 })) parts.push(part);
    expect(result.finishReason).toBe('tool_calls');
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool_calls' });
    expect(events).toEqual(['tool_calls', 'tool_calls']);
  });

  it('chat() is the fold of the parts stream() yields for the same request', async () => {
    const h = await scripted(ANSWER);
    const result = await h.pipe.chat(messages, { tools: TOOLS, temperature: 0 });
    const parts: StreamPart[] = [];
    for await (const part of h.pipe.stream(messages, { tools: TOOLS, temperature: 0 })) parts.push(part);
    const text = (type: string): string => parts.filter((p) => p.type === type).map((p) => (p as { text: string }).text).join('');
    expect(text('reasoning-delta')).toBe(result.reasoning);
    expect(text('text-delta') || null).toBe(result.content);
    const calls = parts.filter((p) => p.type === 'tool-call').map((p) => ({ name: p.name, arguments: p.arguments }));
    expect(calls).toEqual(result.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })));
    const { promptTokens, completionTokens } = result.usage; // the second run hits the prefix cache
    expect(parts.at(-1)).toMatchObject({ finishReason: result.finishReason, usage: { promptTokens, completionTokens } });
  });

  it('a plain answer after reasoning is content, with finish stop', async () => {
    const h = await scripted('No tool needed.\n</think>\n\nIt is sunny.');
    const result = await h.pipe.chat(messages, { tools: TOOLS, temperature: 0 });
    expect(result).toMatchObject({ reasoning: 'No tool needed.', content: 'It is sunny.', toolCalls: [], finishReason: 'stop' });
  });

  it('parses the same under batching and preemption as alone', async () => {
    const h = await scripted(ANSWER, { blocks: 150, scheduler: { maxNumBatchedTokens: 16 } });
    const results = await Promise.all(Array.from({ length: 6 }, () => h.pipe.chat(messages, { tools: TOOLS, temperature: 0 })));
    for (const result of results) expect(result.toolCalls[0]!.arguments).toEqual({ city: 'Paris', days: 3, metric: true });
    expect(new Set(results.map((r) => r.toolCalls[0]!.id)).size).toBe(6); // ids unique across requests
    expect(h.pipe.stats().preemptions).toBeGreaterThan(0);
  });

  it('per-request parsers override the pipeline ones; unknown names are typed errors', async () => {
    const h = await scripted(ANSWER);
    const raw = await h.pipe.chat(messages, { tools: TOOLS, temperature: 0, parsers: { tool: 'hermes', reasoning: 'deepseek_r1' } });
    expect(raw.toolCalls).toEqual([]); // hermes does not read qwen3coder markup
    await expect(h.pipe.chat(messages, { parsers: { tool: 'nope' } })).rejects.toBeInstanceOf(InvalidOptionError);
  });

  it('keeps special tokens in the text when a tool parser reads it, so marker-based formats parse', async () => {
    const call = [...new TextEncoder().encode('[{"name": "get_weather", "arguments": {"city": "Oslo"}}]')];
    const h = await scripted([TOOL_CALLS, ...call], { parsers: { tool: 'mistral' } });
    const parsed = await h.pipe.chat(messages, { tools: TOOLS, temperature: 0 });
    expect(parsed.toolCalls.map((c) => [c.name, c.arguments])).toEqual([['get_weather', { city: 'Oslo' }]]);
    expect(parsed.text.startsWith('[TOOL_CALLS]')).toBe(true);
    const skipped = await h.pipe.chat(messages, { tools: TOOLS, temperature: 0, skipSpecialTokens: true });
    expect(skipped.toolCalls).toEqual([]);
    const plain = await h.pipe.generate('<|assistant|><think>\n', { temperature: 0 });
    expect(plain.text.startsWith('[TOOL_CALLS]')).toBe(false); // no parser: special tokens skipped
  });

  it('generate() on a plain prompt never parses', async () => {
    const h = await scripted(ANSWER);
    const result = await h.pipe.generate('<|assistant|><think>\n', { temperature: 0 });
    expect(result.text).toBe(ANSWER);
  });
});
