/**
 * Malformed and hostile requests get OpenAI-shaped errors with the right status
 * (or a bounded wait), and the server keeps serving everyone else.
 */

import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPresent, startDemoServer, type InProcessServer } from './harness.js';

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

describe.skipIf(!demoPresent)('weft serve under malformed requests', () => {
  let s: InProcessServer;
  const MAX_BODY = 64 * 1024;
  const BODY_TIMEOUT = 500;

  beforeAll(async () => {
    s = await startDemoServer({ maxBodyBytes: MAX_BODY, bodyTimeoutMs: BODY_TIMEOUT });
  });
  afterAll(async () => {
    await s?.close();
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}, agent?: Agent): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request(`${s.server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, ...(agent && { agent }) }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const chat = (body: unknown): Promise<Answer> => post('/v1/chat/completions', JSON.stringify(body));
  const hi = [{ role: 'user', content: 'What is the capital of Japan?' }];

  function expectOpenAiError(answer: Answer, status: number, param?: string | null): Record<string, unknown> {
    expect(answer.status, answer.body).toBe(status);
    expect(answer.headers['content-type']).toMatch(/application\/json/);
    const { error } = JSON.parse(answer.body) as { error: Record<string, unknown> };
    expect(typeof error.message).toBe('string');
    expect(typeof error.type).toBe('string');
    expect(error).toHaveProperty('code');
    if (param !== undefined) expect(error.param).toBe(param);
    return error;
  }

  async function stillServes(): Promise<void> {
    const ok = await chat({ model: 'weft-demo', messages: hi, temperature: 0, max_tokens: 8 });
    expect(ok.status, ok.body).toBe(200);
    expect((JSON.parse(ok.body) as { choices: unknown[] }).choices).toHaveLength(1);
  }

  it('refuses bad JSON, empty bodies and non-object bodies with 400', async () => {
    expectOpenAiError(await post('/v1/chat/completions', '{"model": "weft-demo", "messages": ['), 400);
    expectOpenAiError(await post('/v1/chat/completions', ''), 400);
    expectOpenAiError(await post('/v1/chat/completions', '[1, 2, 3]'), 400);
    expectOpenAiError(await post('/v1/completions', 'null'), 400);
    await stillServes();
  });

  it('names the field of every wrong type or value', async () => {
    expectOpenAiError(await chat({ messages: 'hello' }), 400, 'messages');
    expectOpenAiError(await chat({ messages: [] }), 400, 'messages');
    expectOpenAiError(await chat({ messages: [{ role: 'wizard', content: 'x' }] }), 400, 'messages[0].role');
    expectOpenAiError(await chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }), 400, 'messages[0].content[0]');
    expectOpenAiError(await chat({ messages: hi, temperature: 'hot' }), 400, 'temperature');
    expectOpenAiError(await chat({ messages: hi, max_tokens: -1 }), 400, 'max_tokens');
    expectOpenAiError(await chat({ messages: hi, top_p: 2 }), 400, 'top_p');
    expectOpenAiError(await chat({ messages: hi, stop: [1, 2] }), 400, 'stop');
    expectOpenAiError(await chat({ messages: hi, stream: 'yes' }), 400, 'stream');
    expectOpenAiError(await chat({ messages: hi, tools: [{ type: 'function' }] }), 400, 'tools[0]');
    expectOpenAiError(await chat({ messages: hi, tool_choice: 'required' }), 400, 'tool_choice');
    expectOpenAiError(await chat({ messages: hi, n: 0 }), 400, 'n');
    expectOpenAiError(await chat({ messages: hi, n: 2.5 }), 400, 'n');
    expectOpenAiError(await chat({ messages: hi, response_format: { type: 'json_schema', json_schema: 'x' } }), 400, 'response_format.json_schema');
    expectOpenAiError(await chat({ messages: hi, response_format: { type: 'json_schema', json_schema: { schema: { type: 'number', not: { const: 0 } } } } }), 400, 'response_format.json_schema.schema.not');
    expectOpenAiError(await chat({ messages: hi, tool_choice: { type: 'function' } }), 400, 'tool_choice');
    expectOpenAiError(await post('/v1/completions', JSON.stringify({ prompt: 42 })), 400, 'prompt');
    const tooLong = expectOpenAiError(await post('/v1/completions', JSON.stringify({ prompt: 'word '.repeat(5000), max_tokens: 1 })), 400);
    expect(tooLong.code).toBe('context_length_exceeded');
    await stillServes();
  });

  it('answers unknown models with 404, unknown routes with 404 and wrong methods with 405', async () => {
    expect(expectOpenAiError(await chat({ model: 'gpt-4o', messages: hi }), 404, 'model').code).toBe('model_not_found');
    expectOpenAiError(await post('/v1/audio/speech', '{}'), 404);
    expectOpenAiError(await post('/nowhere', '{}'), 404);
    expectOpenAiError(await post('/v1/models', '{}'), 405);
    // OVMS's /v3 prefix serves the same routes.
    const v3 = await post('/v3/chat/completions', JSON.stringify({ model: 'weft-demo', messages: hi, max_tokens: 4 }));
    expect(v3.status).toBe(200);
  });

  it('refuses huge bodies with 413 without reading them', async () => {
    // Declared too big: refused at once, before a byte of it is read.
    const declared = await rawExchange(s.server.port, 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 104857600\r\n\r\n{"messages":');
    expect(declared).toMatch(/^HTTP\/1\.1 413/);
    expect(declared).toContain('"request_too_large"');
    // Chunked (no length): refused once it passes the limit.
    const big = JSON.stringify({ model: 'weft-demo', messages: [{ role: 'user', content: 'a'.repeat(MAX_BODY * 4) }] });
    const answer = await post('/v1/chat/completions', big, { 'transfer-encoding': 'chunked' });
    expectOpenAiError(answer, 413);
    expect(answer.headers.connection).toBe('close');
    await stillServes();
  });

  it('gives up on a body that never ends with 408 within the body timeout', async () => {
    const started = Date.now();
    const answer = await rawExchange(s.server.port, 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"messages": [');
    const elapsed = Date.now() - started;
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"request_timeout"');
    expect(elapsed).toBeGreaterThanOrEqual(BODY_TIMEOUT - 50);
    expect(elapsed).toBeLessThan(BODY_TIMEOUT + 5_000);
    await stillServes();
  });

  it('answers garbage that is not HTTP with 400 and closes that connection only', async () => {
    const answer = await rawExchange(s.server.port, '\x00\x01\x02 NOT HTTP\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    await stillServes();
  });

  it('keeps serving with 1000 concurrent connections, each answered', async () => {
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const kinds = ['{bad json', JSON.stringify({ messages: 'x' }), JSON.stringify({ model: 'nope', messages: hi })];
    const generation = chat({ model: 'weft-demo', messages: hi, temperature: 0, max_tokens: 32 });
    const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => post('/v1/chat/completions', kinds[i % kinds.length]!, {}, agent)));
    agent.destroy();
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((code) => code === 400)).toHaveLength(667);
    expect(statuses.filter((code) => code === 404)).toHaveLength(333);
    expect((await generation).status).toBe(200);
    await stillServes();
    expect(s.pipe.stats().running).toBe(0);
  }, 120_000);
});

/** Writes raw bytes to the server and collects everything it sends until it closes the connection. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', (error) => (text === '' ? reject(error) : resolve(text)));
  });
}
