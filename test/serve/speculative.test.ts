/**
 * Speculative decoding across the wire: `weft serve --speculative-config`, a request's own
 * `speculative` field, and RemotePipeline / the AI SDK provider sending it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toChatOptions } from '../../src/ai-sdk/call-options.js';
import { chatBody } from '../../src/remote/request-body.js';
import { parseServeArgs, ServeUsageError } from '../../src/serve/command-line.js';
import { demoPresent, startDemoServer, type InProcessServer } from './harness.js';

describe('speculative options on the wire', () => {
  it('--speculative-config takes weft\'s spelling and vLLM\'s n-gram one', () => {
    const weft = parseServeArgs(['-m', 'm', '--speculative-config', '{"method":"prompt-lookup","tokens":3,"ngram":2}']);
    expect(weft.pipeline.speculative).toEqual({ method: 'prompt-lookup', tokens: 3, ngram: 2 });
    const vllm = parseServeArgs(['-m', 'm', '--speculative_config={"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":3}']);
    expect(vllm.pipeline.speculative).toEqual({ method: 'prompt-lookup', tokens: 5, ngram: 3 });
    expect(parseServeArgs(['-m', 'm']).pipeline.speculative).toBeUndefined();
    expect(() => parseServeArgs(['-m', 'm', '--speculative-config', 'prompt-lookup'])).toThrow(ServeUsageError);
    expect(() => parseServeArgs(['-m', 'm', '--speculative-config', '[4]'])).toThrow(/must be a JSON object/);
  });

  it('RemotePipeline sends a request\'s speculative as the body\'s speculative, and nothing when unset', () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    expect(chatBody('m', messages, { speculative: { method: 'prompt-lookup', tokens: 2 } }).speculative).toEqual({ method: 'prompt-lookup', tokens: 2 });
    expect(chatBody('m', messages, { speculative: false }).speculative).toBe(false);
    expect('speculative' in chatBody('m', messages, {})).toBe(false);
  });

  it('the AI SDK provider passes providerOptions.weft.speculative to the call', () => {
    const converted = toChatOptions({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], providerOptions: { weft: { speculative: { method: 'prompt-lookup', tokens: 3 } } } } as never, {});
    expect(converted.options.speculative).toEqual({ method: 'prompt-lookup', tokens: 3 });
    expect(converted.warnings).toEqual([]);
  });
});

describe.skipIf(!demoPresent)('weft serve with speculative decoding', () => {
  let s: InProcessServer;
  beforeAll(async () => {
    s = await startDemoServer({ pipeline: { speculative: { method: 'prompt-lookup', tokens: 4, ngram: 2 } } });
  });
  afterAll(async () => {
    await s?.close();
  });

  const post = (body: object) =>
    fetch(`${s.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'weft-demo', ...body }) });
  const ask = { messages: [{ role: 'user', content: 'Repeat after me: the quick brown fox jumps over the lazy dog, the quick brown fox jumps over the lazy dog.' }], max_tokens: 48, temperature: 0 };

  it('speculates by the server default and per request, with the output of a request without it', async () => {
    const before = s.pipe.stats().speculative!.drafted;
    const plain = (await (await post({ ...ask, speculative: false })).json()) as { choices: { message: { content: string } }[] };
    expect(s.pipe.stats().speculative!.drafted).toBe(before);
    const byDefault = (await (await post(ask)).json()) as typeof plain;
    const own = (await (await post({ ...ask, speculative: { method: 'prompt-lookup', tokens: 2, ngram: 1 } })).json()) as typeof plain;
    expect(s.pipe.stats().speculative!.drafted).toBeGreaterThan(before);
    expect(byDefault.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
    expect(own.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
  });

  it('refuses a bad speculative field with a 400 naming it', async () => {
    const wrongType = await post({ ...ask, speculative: 'on' });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as { error: { param: string } }).error.param).toBe('speculative');
    const badRange = await post({ ...ask, speculative: { method: 'prompt-lookup', tokens: 0 } });
    expect(badRange.status).toBe(400);
    expect(((await badRange.json()) as { error: { param: string } }).error.param).toBe('speculative.tokens');
  });
});
