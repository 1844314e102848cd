/** The pure halves of weft/ai-sdk: the AI SDK's prompt -> ChatMessages, call options -> weft options, weft parts -> spec parts. */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, type StreamPart } from '../../src/index.js';
import { toChatMessages } from '../../src/ai-sdk/index.js';
import { toChatOptions } from '../../src/ai-sdk/call-options.js';
import { StreamPartTranslator } from '../../src/ai-sdk/stream-parts.js';

describe('toChatMessages', () => {
  it('turns system, user, assistant (reasoning, text, tool calls) and tool results into weft messages', () => {
    const { messages, warnings } = toChatMessages([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'What is 2+3' }, { type: 'text', text: 'and 4*5?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two calls.' },
          { type: 'text', text: 'Let me compute.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'calculator', input: { operation: 'add', a: 2, b: 3 } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'calculator', input: '{"operation":"multiply","a":4,"b":5}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'calculator', output: { type: 'json', value: { result: 5 } } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'calculator', output: { type: 'error-text', value: 'overflow' } },
          { type: 'tool-approval-response', approvalId: 'a', approved: true },
        ],
      },
    ]);
    expect(messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 2+3\nand 4*5?' },
      {
        role: 'assistant',
        content: 'Let me compute.',
        reasoning: 'Two calls.',
        toolCalls: [
          { id: 'c1', name: 'calculator', arguments: { operation: 'add', a: 2, b: 3 } },
          { id: 'c2', name: 'calculator', arguments: { operation: 'multiply', a: 4, b: 5 } },
        ],
      },
      { role: 'tool', content: '{"result":5}', toolCallId: 'c1', name: 'calculator' },
      { role: 'tool', content: 'overflow', toolCallId: 'c2', name: 'calculator' },
    ]);
    expect(warnings).toEqual([expect.objectContaining({ type: 'other' })]);
  });

  it('also takes ModelMessages with plain string content (the history an app keeps for ai)', () => {
    const { messages } = toChatMessages([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: [{ type: 'text', text: 'More?' }] },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'More?' },
    ]);
  });

  it('refuses what a text model cannot read, with InvalidOptionError', () => {
    expect(() => toChatMessages([{ role: 'user', content: [{ type: 'file', data: 'aGk=', mediaType: 'image/png' }] }])).toThrow(InvalidOptionError);
    expect(() => toChatMessages([])).toThrow(InvalidOptionError);
    expect(() =>
      toChatMessages([{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x', toolName: 't', input: 'not json' }] }]),
    ).toThrow(/not JSON/);
  });
});

describe('toChatOptions', () => {
  const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }];
  const tool = (name: string) => ({ type: 'function' as const, name, inputSchema: { type: 'object' as const, properties: {} } });

  it('maps the spec settings to weft names and leaves unset ones unset', () => {
    const signal = new AbortController().signal;
    const { options, warnings } = toChatOptions({
      prompt,
      maxOutputTokens: 10,
      temperature: 0.5,
      topP: 0.9,
      topK: 4,
      seed: 3,
      stopSequences: ['\n'],
      presencePenalty: 0.1,
      abortSignal: signal,
      providerOptions: { weft: { minP: 0.05, templateKwargs: { enable_thinking: false } } },
    });
    expect(options).toEqual({
      maxTokens: 10,
      temperature: 0.5,
      topP: 0.9,
      topK: 4,
      seed: 3,
      stop: ['\n'],
      presencePenalty: 0.1,
      signal,
      minP: 0.05,
      templateKwargs: { enable_thinking: false },
    });
    expect(warnings).toEqual([]);
    expect(toChatOptions({ prompt }).options).toEqual({});
    // One completion per LanguageModelV3 call: weft's n is refused with a warning that says what to do instead.
    const withN = toChatOptions({ prompt, providerOptions: { weft: { n: 3 } } });
    expect(withN.options).toEqual({});
    expect(withN.warnings).toEqual([expect.objectContaining({ type: 'unsupported', feature: 'providerOptions.weft.n', details: expect.stringMatching(/one completion/) })]);
  });

  it('passes toolChoice and responseFormat on to be enforced, with every tool offered', () => {
    const tools = [tool('a'), tool('b')];
    const names = (call: ReturnType<typeof toChatOptions>) => call.options.tools?.map((t) => t.function.name);
    expect(names(toChatOptions({ prompt, tools }))).toEqual(['a', 'b']);
    expect(toChatOptions({ prompt, tools }).options.toolChoice).toBeUndefined();
    // Tool-guided auto and parallel calls are weft settings (a model default or per call).
    const guided = toChatOptions({ prompt, tools, providerOptions: { weft: { guidedTools: true, parallelToolCalls: false } } }).options;
    expect([guided.guidedTools, guided.parallelToolCalls]).toEqual([true, false]);
    expect(toChatOptions({ prompt, tools }, { guidedTools: true }).options.guidedTools).toBe(true);
    expect(toChatOptions({ prompt }, { guidedTools: true }).options.guidedTools).toBeUndefined();
    for (const [choice, expected] of [
      [{ type: 'none' }, 'none'],
      [{ type: 'required' }, 'required'],
      [{ type: 'tool', toolName: 'b' }, { name: 'b' }],
    ] as const) {
      const converted = toChatOptions({ prompt, tools, toolChoice: choice });
      expect(converted.options.toolChoice).toEqual(expected);
      expect(names(converted)).toEqual(['a', 'b']);
      expect(converted.requirement).toBeUndefined();
      expect(converted.warnings).toEqual([]);
    }
    const schema = { type: 'object', properties: { x: { type: 'integer' } } };
    expect(toChatOptions({ prompt, responseFormat: { type: 'json', schema, name: 'thing' } }).options.responseFormat).toEqual({ type: 'json_schema', schema, name: 'thing' });
    expect(toChatOptions({ prompt, responseFormat: { type: 'json' } }).options.responseFormat).toEqual({ type: 'json_object' });
    expect(toChatOptions({ prompt, responseFormat: { type: 'text' } }).options.responseFormat).toBeUndefined();
  });

  it('where the pipeline cannot enforce: none offers no tools and turns the tool parser off, tool offers one, json warns', () => {
    const tools = [tool('a'), tool('b')];
    const refused = { toolChoice: { refused: 'no grammar' }, responseFormat: { refused: 'no pattern' } } as const;
    const none = toChatOptions({ prompt, tools, toolChoice: { type: 'none' }, providerOptions: { weft: { parsers: { reasoning: 'qwen3', tool: 'mistral' } } } }, {}, refused);
    expect(none.options.tools).toBeUndefined();
    expect(none.options.parsers).toEqual({ reasoning: 'qwen3', tool: undefined });
    const named = toChatOptions({ prompt, tools, toolChoice: { type: 'tool', toolName: 'b' } }, {}, refused);
    expect(named.options.tools?.map((t) => t.function.name)).toEqual(['b']);
    expect(named.options.toolChoice).toBeUndefined();
    expect(named.requirement).toEqual({ kind: 'named', toolName: 'b' });
    expect(named.warnings).toEqual([expect.objectContaining({ type: 'compatibility', feature: 'toolChoice', details: expect.stringMatching(/no grammar/) })]);
    const json = toChatOptions({ prompt, responseFormat: { type: 'json' } }, {}, refused);
    expect(json.options.responseFormat).toBeUndefined();
    expect(json.warnings).toEqual([expect.objectContaining({ type: 'unsupported', feature: 'responseFormat' })]);
  });
});

describe('StreamPartTranslator', () => {
  const usage = { promptTokens: 10, completionTokens: 5, cachedPromptTokens: 4 };
  const run = (parts: StreamPart[], translator = new StreamPartTranslator('r1-call')): LanguageModelV3StreamPart[] =>
    parts.flatMap((part) => translator.translate(part));

  it('opens and closes one text or reasoning block at a time, and streams tool input before the call', () => {
    const out = run([
      { type: 'reasoning-delta', text: 'Think' },
      { type: 'reasoning-delta', text: 'ing.' },
      { type: 'text-delta', text: 'Sure.' },
      { type: 'tool-call-start', index: 0, id: 'call_0', name: 'calc' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '1}' },
      { type: 'tool-call', index: 0, id: 'call_0', name: 'calc', arguments: { a: 1 } },
      { type: 'token', tokenIds: [1] },
      { type: 'finish', finishReason: 'tool_calls', usage },
    ]);
    expect(out).toEqual([
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'Think' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'ing.' },
      { type: 'reasoning-end', id: 'reasoning-0' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Sure.' },
      { type: 'text-end', id: 'text-1' },
      { type: 'tool-input-start', id: 'r1-call-0', toolName: 'calc' },
      { type: 'tool-input-delta', id: 'r1-call-0', delta: '{"a":' },
      { type: 'tool-input-delta', id: 'r1-call-0', delta: '1}' },
      { type: 'tool-input-end', id: 'r1-call-0' },
      { type: 'tool-call', toolCallId: 'r1-call-0', toolName: 'calc', input: '{"a":1}' },
      {
        type: 'finish',
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: {
          inputTokens: { total: 10, noCache: 6, cacheRead: 4, cacheWrite: undefined },
          outputTokens: { total: 5, text: undefined, reasoning: undefined },
          raw: usage,
        },
        providerMetadata: { weft: { finishReason: 'tool_calls', cachedPromptTokens: 4 } },
      },
    ]);
  });

  it('ends an open block and a cut-off tool input before the finish, and checks a required tool', () => {
    const translator = new StreamPartTranslator('r2-call', { kind: 'named', toolName: 'calc' });
    const out = run(
      [
        { type: 'text-delta', text: 'x' },
        { type: 'tool-call-start', index: 0, id: 'call_0', name: 'calc' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a"' },
        { type: 'finish', finishReason: 'length', usage, warnings: ['unclosed call'] },
      ],
      translator,
    );
    expect(out.map((part) => part.type)).toEqual(['text-start', 'text-delta', 'text-end', 'tool-input-start', 'tool-input-delta', 'tool-input-end', 'finish']);
    expect(out.at(-1)).toMatchObject({
      finishReason: { unified: 'length', raw: 'length' },
      providerMetadata: { weft: { warnings: ['unclosed call'], toolChoiceMet: false } },
    });
    expect(translator.toolChoiceMet()).toBe(false);
  });
});
