/**
 * OpenAI's `n` on `weft serve` and through RemotePipeline (docs/parallel-sampling.md),
 * over the test backend: `choices[i].index`, streamed chunks with each choice's
 * index, usage counting the prompt once, and the same choices as in process.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionError, RemotePipeline, WeftServer } from '../../src/index.js';
import { ChatTemplate } from '../../src/text/chat-template.js';
import { harness, type Harness } from '../support/harness.js';

describe('n > 1 over HTTP', () => {
  let h: Harness;
  let server: WeftServer;
  let client: OpenAI;
  let remote: RemotePipeline;
  const messages = [{ role: 'user' as const, content: 'pick one' }];
  const SAMPLED = { temperature: 1, max_tokens: 12, ignore_eos: true, seed: 21 };

  beforeAll(async () => {
    h = await harness({ chatTemplate: new ChatTemplate('{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>') });
    server = await WeftServer.start({ pipeline: h.pipe, modelName: 'test', port: 0 });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    remote = await RemotePipeline.create({ remote: { baseURL: `${server.url}/v1`, model: 'test' } });
  });
  afterAll(async () => {
    await remote?.close();
    await server?.close(1000);
    await h?.pipe.close();
  });

  it('chat completions: n choices with their index, each the in-process choice, usage with the prompt once', async () => {
    const reply = await client.chat.completions.create({ model: 'test', messages, n: 3, ...SAMPLED } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const local = await h.pipe.chat(messages, { temperature: 1, maxTokens: 12, ignoreEos: true, seed: 21, n: 3 });
    expect(reply.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(reply.choices.map((c) => c.message.content)).toEqual(local.choices!.map((c) => c.content));
    expect(reply.choices.map((c) => c.finish_reason)).toEqual(['length', 'length', 'length']);
    expect(reply.usage).toMatchObject({ prompt_tokens: local.usage.promptTokens, completion_tokens: 36, total_tokens: local.usage.promptTokens + 36 });
  });

  it('streamed: a role chunk for every choice, deltas and finishes by choice index, one usage chunk at the end', async () => {
    const stream = await client.chat.completions.create({ model: 'test', messages, n: 3, stream: true, stream_options: { include_usage: true }, ...SAMPLED } as OpenAI.ChatCompletionCreateParamsStreaming);
    const content = ['', '', ''];
    const finishes: number[] = [];
    const roles: number[] = [];
    const usages: OpenAI.CompletionUsage[] = [];
    for await (const chunk of stream) {
      if (chunk.usage) usages.push(chunk.usage);
      for (const choice of chunk.choices) {
        if (choice.delta.role === 'assistant') roles.push(choice.index);
        content[choice.index] += choice.delta.content ?? '';
        if (choice.finish_reason !== null) finishes.push(choice.index);
      }
    }
    expect(roles).toEqual([0, 1, 2]);
    expect(finishes.sort()).toEqual([0, 1, 2]);
    const local = await h.pipe.chat(messages, { temperature: 1, maxTokens: 12, ignoreEos: true, seed: 21, n: 3 });
    expect(content).toEqual(local.choices!.map((c) => c.content));
    expect(usages).toHaveLength(1);
    expect(usages[0]).toMatchObject({ prompt_tokens: local.usage.promptTokens, completion_tokens: 36 });
  });

  it('completions: n texts (echo starts each), streamed and whole agree', async () => {
    const body = { model: 'test', prompt: 'complete me', n: 2, echo: true, ...SAMPLED };
    const whole = await client.completions.create(body as OpenAI.CompletionCreateParamsNonStreaming);
    expect(whole.choices.map((c) => c.index)).toEqual([0, 1]);
    for (const choice of whole.choices) expect(choice.text.startsWith('complete me')).toBe(true);
    const streamed = ['complete me', 'complete me'];
    for await (const chunk of await client.completions.create({ ...body, echo: false, stream: true } as OpenAI.CompletionCreateParamsStreaming)) {
      for (const choice of chunk.choices) streamed[choice.index] += choice.text;
    }
    expect(streamed).toEqual(whole.choices.map((c) => c.text));
    expect(whole.usage?.completion_tokens).toBe(24);
  });

  it('n out of range is a 400 naming n', async () => {
    for (const n of [0, 65]) {
      const bad = client.chat.completions.create({ model: 'test', messages, n });
      await expect(bad).rejects.toMatchObject({ status: 400, param: 'n' });
    }
    const fractional = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages, n: 1.5 }) });
    expect(fractional.status).toBe(400);
    expect(((await fractional.json()) as { error: { param: string } }).error.param).toBe('n');
  });

  it('RemotePipeline carries n: the same choices as in process, parts tagged with their choice', async () => {
    const options = { temperature: 1, maxTokens: 12, ignoreEos: true, seed: 21, n: 3 };
    const [there, here] = [await remote.chat(messages, options), await h.pipe.chat(messages, options)];
    expect(there.choices!.map((c) => c.content)).toEqual(here.choices!.map((c) => c.content));
    expect(there.choices!.map((c) => c.index)).toEqual([0, 1, 2]);
    // Over OpenAI's wire usage is the request's: prompt once, completions summed.
    expect(there.usage).toMatchObject({ promptTokens: here.usage.promptTokens, completionTokens: 36 });
    const generated = await remote.generate('complete me', { ...options, n: 2 });
    expect(generated.choices!.map((c) => c.text)).toEqual((await h.pipe.generate('complete me', { ...options, n: 2 })).choices!.map((c) => c.text));
    const choicesSeen = new Set<number>();
    for await (const part of remote.stream(messages, options)) if (part.choice !== undefined) choicesSeen.add(part.choice);
    expect([...choicesSeen].sort()).toEqual([0, 1, 2]);
    await expect(remote.generate('x', { n: 0 })).rejects.toBeInstanceOf(InvalidOptionError);
  });
});
