/**
 * RemotePipeline against `weft serve` on loopback: the same answers, parts,
 * aborts and typed errors as the in-process Pipeline behind the server, both
 * when the server parses reasoning and tool calls and when it sends raw text
 * (then weft's parsers run on the client side).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  InvalidOptionError,
  Pipeline,
  PipelineClosedError,
  PromptTooLongError,
  RemoteError,
  RemotePipeline,
  WeftServer,
  type ChatMessage,
  type StreamPart,
} from '../../src/index.js';
import { DEMO_PARSERS, demoPresent, demoTools, startDemoServer, type InProcessServer } from '../serve/harness.js';

const KEY = 'sk-remote-test';

describe.skipIf(!demoPresent)('RemotePipeline over weft serve', () => {
  const tools = demoPresent ? demoTools() : [];
  let s: InProcessServer;
  /** A second server over the same pipeline that parses nothing: it sends raw text. */
  let raw: WeftServer;
  let remote: RemotePipeline;

  beforeAll(async () => {
    s = await startDemoServer({ apiKey: KEY });
    raw = await WeftServer.start({ pipeline: s.pipe, modelName: 'weft-demo', port: 0, parsers: { tool: 'none', reasoning: 'none' } });
    remote = await RemotePipeline.create({ remote: { baseURL: s.baseURL, model: 'weft-demo', apiKey: KEY } });
  });
  afterAll(async () => {
    await raw?.close(1000);
    await s?.close();
  });

  const questions = ['What is 37 times 12.5?', 'What is the capital of Japan?', "What's the weather in Paris in fahrenheit? Also, convert 12 km to miles."];
  const options = { tools, temperature: 0 } as const;

  /** Parts without the call ids, which each run draws afresh. */
  const comparable = (parts: StreamPart[]) => parts.map((p) => ('id' in p ? { ...p, id: '' } : p));
  async function collect(iterable: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
    const parts: StreamPart[] = [];
    for await (const part of iterable) parts.push(part);
    return parts;
  }

  it('chats like the pipeline: reasoning, tool calls, content, finish and usage', async () => {
    for (const question of questions) {
      const messages: ChatMessage[] = [{ role: 'user', content: question }];
      const expected = await s.pipe.chat(messages, { ...options, parsers: DEMO_PARSERS });
      const got = await remote.chat(messages, options);
      expect(got.reasoning).toBe(expected.reasoning);
      expect(got.content).toBe(expected.content);
      expect(got.toolCalls.map((c) => [c.name, c.arguments])).toEqual(expected.toolCalls.map((c) => [c.name, c.arguments]));
      expect(got.finishReason).toBe(expected.finishReason);
      expect(got.usage.promptTokens).toBe(expected.usage.promptTokens);
      expect(got.usage.completionTokens).toBe(expected.usage.completionTokens);
      expect(got.usage.cachedPromptTokens).toBeGreaterThan(0); // the pipeline just ran the same prompt
    }
  });

  it('sends toolChoice and responseFormat: the server enforces them as the pipeline does', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'What is the capital of Japan?' }];
    for (const toolChoice of ['required', { name: 'convert_units' }] as const) {
      for (const parallelToolCalls of [undefined, false]) {
        const guided = { ...options, toolChoice, ...(parallelToolCalls !== undefined && { parallelToolCalls }) };
        const expected = await s.pipe.chat(messages, { ...guided, parsers: DEMO_PARSERS });
        const got = await remote.chat(messages, guided);
        expect(got.finishReason).toBe('tool_calls');
        expect(got.toolCalls.map((c) => [c.name, c.arguments])).toEqual(expected.toolCalls.map((c) => [c.name, c.arguments]));
      }
    }
    // Tool-guided auto is the server's setting (--enable-tool-guided-generation).
    await expect(remote.chat(messages, { ...options, guidedTools: true })).rejects.toThrow(/guidedTools: the server decides it/);
    const schema = { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, big: { type: 'boolean' } }, required: ['city', 'big'] };
    const expected = await s.pipe.chat(messages, { temperature: 0, responseFormat: { type: 'json_schema', schema }, parsers: DEMO_PARSERS });
    const got = await remote.chat(messages, { temperature: 0, responseFormat: { type: 'json_schema', schema } });
    expect(got.content).toBe(expected.content);
    expect(Object.keys(JSON.parse(got.content!) as object).sort()).toEqual(['big', 'city']);
  });

  it('streams the same typed parts as the pipeline (token ids aside)', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: questions[2]! }];
    const expected = await collect(s.pipe.stream(messages, { ...options, parsers: DEMO_PARSERS }));
    const got = await collect(remote.stream(messages, options));
    const finishOf = (parts: StreamPart[]) => parts.at(-1) as Extract<StreamPart, { type: 'finish' }>;
    expect(comparable(got.slice(0, -1))).toEqual(comparable(expected.slice(0, -1)));
    expect(finishOf(got).finishReason).toBe(finishOf(expected).finishReason);
    expect(got.filter((p) => p.type === 'tool-call').length).toBeGreaterThan(0);
  });

  it('parses locally when the server sends raw text', async () => {
    const local = await RemotePipeline.create({ remote: { baseURL: `${raw.url}/v1`, model: 'weft-demo', parsers: DEMO_PARSERS } });
    for (const question of questions) {
      const messages: ChatMessage[] = [{ role: 'user', content: question }];
      const expected = await s.pipe.chat(messages, { ...options, parsers: DEMO_PARSERS });
      const got = await local.chat(messages, options);
      expect(got.reasoning).toBe(expected.reasoning);
      expect(got.content).toBe(expected.content);
      expect(got.toolCalls.map((c) => [c.name, c.arguments])).toEqual(expected.toolCalls.map((c) => [c.name, c.arguments]));
      expect(got.finishReason).toBe(expected.finishReason);
      expect(got.text).toBe(expected.text);
    }
  });

  it('is what Pipeline.create({ remote }) gives', async () => {
    const viaPipeline = await Pipeline.create({ remote: { baseURL: s.baseURL, model: 'weft-demo', apiKey: KEY } });
    expect(viaPipeline).toBeInstanceOf(RemotePipeline);
    const expected = await s.pipe.chat([{ role: 'user', content: questions[0]! }], { ...options, parsers: DEMO_PARSERS });
    const got = await viaPipeline.chat([{ role: 'user', content: questions[0]! }], options);
    expect(got.toolCalls.map((c) => c.arguments)).toEqual(expected.toolCalls.map((c) => c.arguments));
    await viaPipeline.close();
    await expect(Pipeline.create({ remote: { baseURL: s.baseURL, model: 'weft-demo' }, model: 'x' } as never)).rejects.toMatchObject({ option: 'remote' });
  });

  it('generates like the pipeline', async () => {
    const expected = await s.pipe.generate('Once upon a time', { maxTokens: 40, temperature: 0 });
    const got = await remote.generate('Once upon a time', { maxTokens: 40, temperature: 0 });
    expect(got.text).toBe(expected.text);
    expect(got.finishReason).toBe(expected.finishReason);
    expect(got.usage.completionTokens).toBe(expected.usage.completionTokens);
    expect(got.tokenIds).toEqual([]);
  });

  it('aborts through the AbortSignal, closing the HTTP stream and freeing the request on the server', async () => {
    const controller = new AbortController();
    const abortedBefore = s.server.metrics.snapshot().requests.aborted;
    let parts = 0;
    const run = (async () => {
      for await (const _ of remote.stream('Once upon a time', { maxTokens: 3000, ignoreEos: true, temperature: 0, signal: controller.signal })) {
        if (++parts === 5) controller.abort();
      }
    })();
    await expect(run).rejects.toBeInstanceOf(AbortError);
    expect(parts).toBe(5);
    await waitFor(() => s.server.metrics.snapshot().requests.aborted > abortedBefore && s.pipe.stats().running === 0);
    expect(s.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);

    // Breaking out of the loop cancels too.
    for await (const part of remote.stream('Once upon a time', { maxTokens: 3000, ignoreEos: true })) {
      if (part.type === 'text-delta') break;
    }
    await waitFor(() => s.server.metrics.snapshot().requests.aborted > abortedBefore + 1 && s.pipe.stats().running === 0);
  });

  it('maps the server\'s errors to weft\'s typed errors', async () => {
    await expect(RemotePipeline.create({ remote: { baseURL: s.baseURL, model: 'gpt-4o', apiKey: KEY } })).rejects.toMatchObject({ option: 'remote.model' });
    const wrongKey = RemotePipeline.create({ remote: { baseURL: s.baseURL, model: 'weft-demo', apiKey: 'nope' } });
    await expect(wrongKey).rejects.toBeInstanceOf(RemoteError);
    await expect(wrongKey).rejects.toMatchObject({ status: 401 });
    await expect(remote.chat([{ role: 'user', content: 'hi' }], { temperature: -1 })).rejects.toMatchObject({ option: 'temperature' });
    await expect(remote.chat([{ role: 'user', content: 'hi' }], { temperature: -1 })).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(remote.generate('word '.repeat(5000), { maxTokens: 1 })).rejects.toBeInstanceOf(PromptTooLongError);
    const unchecked = await RemotePipeline.create({ remote: { baseURL: s.baseURL, model: 'other', apiKey: KEY, checkModel: false } });
    await expect(unchecked.generate('hi')).rejects.toMatchObject({ option: 'model' });
    // Nothing listens there once the server is closed.
    const gone = await WeftServer.start({ pipeline: s.pipe, modelName: 'weft-demo', port: 0 });
    const url = `${gone.url}/v1`;
    await gone.close(0);
    await expect(RemotePipeline.create({ remote: { baseURL: url, model: 'weft-demo' } })).rejects.toBeInstanceOf(RemoteError);
    await expect(RemotePipeline.create({ remote: { baseURL: 'ftp://x', model: 'weft-demo' } })).rejects.toMatchObject({ option: 'remote.baseURL' });
  });

  it('close() cancels running requests with PipelineClosedError and refuses new ones', async () => {
    const closing = await RemotePipeline.create({ remote: { baseURL: s.baseURL, model: 'weft-demo', apiKey: KEY } });
    const run = (async () => {
      for await (const part of closing.stream('Once upon a time', { maxTokens: 3000, ignoreEos: true })) {
        if (part.type === 'text-delta') await closing.close();
      }
    })();
    await expect(run).rejects.toBeInstanceOf(PipelineClosedError);
    await expect(closing.generate('hi')).rejects.toBeInstanceOf(PipelineClosedError);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
