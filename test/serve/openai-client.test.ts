/**
 * The official `openai` npm client (6.x) against `weft serve` on loopback, with
 * the demo model: what a client gets over HTTP equals what the pipeline gives
 * in-process, for plain chats, reasoning, tool calls and their round trip.
 */

import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemoTool } from '../../src/cli/demo.js';
import type { ChatMessage } from '../../src/index.js';
import { inferParsers, inferReasoningParser, inferToolParser, type ModelSigns } from '../../src/tool-formats/infer.js';
import { DEMO_PARSERS, demoPresent, demoTools, startDemoServer, type InProcessServer } from './harness.js';

const KEY = 'sk-test-weft';

describe.skipIf(!demoPresent)('openai client against weft serve', () => {
  const tools = demoPresent ? demoTools() : [];
  let s: InProcessServer;
  let client: OpenAI;

  beforeAll(async () => {
    s = await startDemoServer({ apiKey: KEY });
    client = new OpenAI({ baseURL: s.baseURL, apiKey: KEY, maxRetries: 0, timeout: 30_000 });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** The same question in-process, for the expected values. */
  const local = (messages: ChatMessage[]) => s.pipe.chat(messages, { tools, temperature: 0, parsers: DEMO_PARSERS });

  /** Streams a chat and adds up what the chunks carry. */
  async function streamed(messages: ChatCompletionMessageParam[], signal?: AbortSignal) {
    const stream = await client.chat.completions.create(
      { model: 'weft-demo', messages, tools: tools as OpenAI.ChatCompletionTool[], temperature: 0, stream: true, stream_options: { include_usage: true } },
      { signal },
    );
    let content = '';
    let reasoning = '';
    let finish: string | null = null;
    let usage: ChatCompletionChunk['usage'] | undefined;
    const calls: { id?: string; name?: string; arguments: string }[] = [];
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta as ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };
      content += delta.content ?? '';
      reasoning += delta.reasoning_content ?? '';
      for (const call of delta.tool_calls ?? []) {
        const slot = (calls[call.index] ??= { arguments: '' });
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name = call.function.name;
        slot.arguments += call.function?.arguments ?? '';
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    return { content, reasoning, finish, usage, calls, chunks };
  }

  it('answers a chat without streaming, with reasoning_content, as the pipeline does', async () => {
    const question = 'What is the capital of Japan?';
    const expected = await local([{ role: 'user', content: question }]);
    const reply = await client.chat.completions.create({
      model: 'weft-demo',
      messages: [{ role: 'user', content: question }],
      tools: tools as OpenAI.ChatCompletionTool[],
      temperature: 0,
    });
    const message = reply.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
    expect(expected.content).toBeTruthy();
    expect(message.content).toBe(expected.content);
    expect(message.reasoning_content).toBe(expected.reasoning);
    expect(message.tool_calls ?? []).toEqual([]);
    expect(reply.choices[0]!.finish_reason).toBe('stop');
    expect(reply.object).toBe('chat.completion');
    expect(reply.usage?.prompt_tokens).toBe(expected.usage.promptTokens);
    expect(reply.usage?.completion_tokens).toBe(expected.usage.completionTokens);
  });

  it('streams the same reply as chunks, reasoning and usage with cached tokens included', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Give me the forecast for Tokyo for the next 3 days.' }];
    const expected = await local(messages);
    const got = await streamed(messages as ChatCompletionMessageParam[]);
    expect(got.chunks).toBeGreaterThan(10);
    expect(got.reasoning).toBe(expected.reasoning);
    expect(got.content).toBe(expected.content ?? '');
    expect(got.finish).toBe(expected.finishReason);
    expect(got.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) }))).toEqual(
      expected.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
    );
    // The same prompt ran in-process just before: its full blocks come from the prefix cache.
    expect(got.usage?.prompt_tokens).toBe(expected.usage.promptTokens);
    expect(got.usage?.completion_tokens).toBe(expected.usage.completionTokens);
    expect(got.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(16 * Math.floor((expected.usage.promptTokens - 1) / 16) - 16);
    expect(got.usage?.total_tokens).toBe(expected.usage.promptTokens + expected.usage.completionTokens);
  });

  it('returns qwen3coder tool calls as tool_calls and takes the results back as tool messages', async () => {
    const question = 'What is 37 times 12.5?';
    const first = await client.chat.completions.create({
      model: 'weft-demo',
      messages: [{ role: 'user', content: question }],
      tools: tools as OpenAI.ChatCompletionTool[],
      temperature: 0,
    });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const calls = choice.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    const call = calls[0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.type).toBe('function');
    expect(call.function.name).toBe('calculator');
    const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
    expect(args).toEqual({ operation: 'multiply', a: 37, b: 12.5 });

    // Streamed, the same call arrives in pieces that add up.
    const streamedCall = await streamed([{ role: 'user', content: question }]);
    expect(streamedCall.finish).toBe('tool_calls');
    expect(streamedCall.calls).toHaveLength(1);
    expect(streamedCall.calls[0]!.name).toBe('calculator');
    expect(JSON.parse(streamedCall.calls[0]!.arguments)).toEqual(args);
    expect(streamedCall.calls[0]!.id).toMatch(/^call_/);

    // Round trip: the assistant message as the client got it, then the tool's result.
    const result = JSON.stringify(runDemoTool('calculator', args));
    const answer = await client.chat.completions.create({
      model: 'weft-demo',
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: choice.message.content, tool_calls: calls, ...({ reasoning_content: (choice.message as { reasoning_content?: string }).reasoning_content } as object) },
        { role: 'tool', tool_call_id: call.id, content: result },
      ],
      tools: tools as OpenAI.ChatCompletionTool[],
      temperature: 0,
    });
    const expected = await local([
      { role: 'user', content: question },
      {
        role: 'assistant',
        content: '',
        reasoning: (choice.message as { reasoning_content?: string }).reasoning_content!,
        toolCalls: [{ id: call.id, name: 'calculator', arguments: args }],
      },
      { role: 'tool', content: result, toolCallId: call.id, name: 'calculator' },
    ]);
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    expect(answer.choices[0]!.message.content).toBe(expected.content);
    expect(answer.choices[0]!.message.content).toContain('462.5');
  });

  it('cancels a streamed request through the client AbortController, and only that one', async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'weft-demo', messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, max_tokens: 3000, stream: true, ...({ ignore_eos: true } as object) },
      { signal: controller.signal },
    );
    const before = s.pipe.stats().requests.finished;
    const other = streamed([{ role: 'user', content: 'What is the capital of Japan?' }]);
    let chunks = 0;
    // The client ends the loop quietly when its own signal aborts it.
    for await (const _ of stream) {
      if (++chunks === 5) controller.abort();
    }
    expect(chunks).toBe(5);
    const done = await other;
    expect(done.finish).toBe('stop');
    // The aborted request ends in the engine and gives its blocks back.
    await waitFor(() => s.pipe.stats().requests.finished >= before + 2 && s.pipe.stats().running === 0);
    const metrics = s.server.metrics.snapshot();
    expect(metrics.requests.aborted).toBeGreaterThanOrEqual(1);
    expect(metrics.kv.pools[0]!.usedBlocks).toBe(0);
  });

  it('n = 2: choices with their index, each the in-process choice, usage with the prompt once', async () => {
    const messages = [{ role: 'user' as const, content: 'Tell me about the weather.' }];
    const reply = await client.chat.completions.create({ model: 'weft-demo', messages, n: 2, temperature: 0.9, seed: 4, max_tokens: 24 });
    const here = await s.pipe.chat(messages, { temperature: 0.9, seed: 4, maxTokens: 24, parsers: DEMO_PARSERS, n: 2 });
    expect(reply.choices.map((c) => c.index)).toEqual([0, 1]);
    const said = (content: string | null | undefined, reasoning: unknown) => `${String(reasoning ?? '')}|${content ?? ''}`;
    expect(reply.choices.map((c) => said(c.message.content, (c.message as { reasoning_content?: string }).reasoning_content))).toEqual(here.choices!.map((c) => said(c.content, c.reasoning)));
    expect(reply.choices.map((c) => c.finish_reason)).toEqual(here.choices!.map((c) => c.finishReason));
    expect(here.choices!.some((c) => said(c.content, c.reasoning) !== '|')).toBe(true); // something was said to compare
    expect(reply.usage).toMatchObject({ prompt_tokens: here.usage.promptTokens, completion_tokens: here.usage.completionTokens });
  });

  it('maps errors to the client\'s typed errors', async () => {
    await expect(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const wrongKey = new OpenAI({ baseURL: s.baseURL, apiKey: 'nope', maxRetries: 0 });
    await expect(wrongKey.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const bad = client.chat.completions.create({ model: 'weft-demo', messages: [{ role: 'user', content: 'hi' }], n: 100 });
    await expect(bad).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(bad).rejects.toMatchObject({ status: 400, param: 'n' });
    await expect(
      client.chat.completions.create({ model: 'weft-demo', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { format: 'iri' } } } }),
    ).rejects.toMatchObject({ status: 400, param: 'response_format.json_schema.schema.format' });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['weft-demo']);
  });

  it('returns logprobs: one per generated token, greedy picks the most likely, top_logprobs alternatives', async () => {
    const reply = await client.chat.completions.create({
      model: 'weft-demo',
      messages: [{ role: 'user', content: 'What is the capital of Japan?' }],
      temperature: 0,
      max_tokens: 12,
      logprobs: true,
      top_logprobs: 3,
    });
    const tokens = reply.choices[0]!.logprobs!.content!;
    expect(tokens).toHaveLength(reply.usage!.completion_tokens);
    for (const t of tokens) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top_logprobs).toHaveLength(3);
      expect(t.top_logprobs[0]!.token).toBe(t.token);
      expect(t.top_logprobs[0]!.logprob).toBeCloseTo(t.logprob, 9);
      expect(t.bytes).toEqual([...Buffer.from(t.token)]);
    }
    const expected = await s.pipe.generate(s.pipe.chatTemplate!.render([{ role: 'user', content: 'What is the capital of Japan?' }]), { maxTokens: 12, temperature: 0 });
    expect(tokens.map((t) => t.token).join('')).toBe(s.pipe.tokenizer.decode(expected.tokenIds, { skipSpecialTokens: false }));
  });

  it('infers the demo model\'s parsers from its chat template and vocabulary', async () => {
    const signs: ModelSigns = { render: (messages, options) => s.pipe.chatTemplate!.render(messages, options), hasToken: (text) => s.pipe.tokenizer.tokenToId(text) !== undefined };
    expect((await inferToolParser(signs))?.parser).toBe('qwen3coder');
    expect((await inferReasoningParser(signs))?.parser).toBe('qwen3');
    expect(await inferParsers({ reasoning: 'none' }, signs)).toEqual({ tool: 'qwen3coder', reasoning: 'none' });
  });

  it('serves legacy completions, streamed and not', async () => {
    const expected = await s.pipe.generate('The weather in Paris', { maxTokens: 12, temperature: 0 });
    const whole = await client.completions.create({ model: 'weft-demo', prompt: 'The weather in Paris', max_tokens: 12, temperature: 0 });
    expect(whole.choices[0]!.text).toBe(expected.text);
    let text = '';
    for await (const chunk of await client.completions.create({ model: 'weft-demo', prompt: 'The weather in Paris', max_tokens: 12, temperature: 0, stream: true })) {
      text += chunk.choices[0]?.text ?? '';
    }
    expect(text).toBe(expected.text);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
