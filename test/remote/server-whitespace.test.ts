/**
 * A vLLM server (qwen3 reasoning parser, qwen3_coder tool parser) hands on the
 * newlines around the think tags: reasoning "\nThe user wants …\n", content
 * "\n\nThe capital of Japan is Tokyo.". RemotePipeline gives them as the
 * in-process pipeline does (reasoning trimmed, content trimmed at its start),
 * through chat() and stream(), whether the whitespace comes in deltas of its
 * own or inside the text's. A fake server on loopback sends vLLM's chunks.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createParserChain, createReasoningParser, createToolParser, RemotePipeline, type StreamPart } from '../../src/index.js';

const REASONING = '\nThe user wants the capital of Japan. That is Tokyo.\n';
const CONTENT = '\n\nThe capital of Japan is Tokyo.';
/** What the in-process pipeline's parsers make of the same reply. */
const RAW = `<think>${REASONING}</think>${CONTENT}`;

/** vLLM's deltas: `split` sends the whitespace in deltas of its own (as its tokenizer does), else one delta each. */
function chunks(split: boolean): object[] {
  const pieces = (text: string): string[] => (split ? text.split(/(\s+)/).filter((p) => p !== '') : [text]);
  const delta = (d: object) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'qwen3', choices: [{ index: 0, delta: d, finish_reason: null }] });
  return [
    delta({ role: 'assistant', content: '' }),
    ...pieces(REASONING).map((text) => delta({ reasoning_content: text })),
    ...pieces(CONTENT).map((text) => delta({ content: text })),
    { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'qwen3', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'qwen3', choices: [], usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 } },
  ];
}

describe('RemotePipeline over a server that keeps the whitespace around the think tags', () => {
  let server: Server;
  let baseURL = '';
  let split = false;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'qwen3' }] }));
        return;
      }
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const chunk of chunks(split)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const inProcess = createParserChain({ reasoning: createReasoningParser('qwen3'), tool: createToolParser('qwen3coder') }).parse(RAW);

  for (const spread of [false, true]) {
    const how = spread ? 'the whitespace in deltas of its own' : 'one delta each';
    it(`chat() gives reasoning and content trimmed as in process (${how})`, async () => {
      split = spread;
      const remote = await RemotePipeline.create({ remote: { baseURL, model: 'qwen3' } });
      const reply = await remote.chat([{ role: 'user', content: 'What is the capital of Japan?' }]);
      expect(inProcess.reasoning).toBe('The user wants the capital of Japan. That is Tokyo.');
      expect(inProcess.content).toBe('The capital of Japan is Tokyo.');
      expect(reply.reasoning).toBe(inProcess.reasoning);
      expect(reply.content).toBe(inProcess.content);
      expect(reply.finishReason).toBe('stop');
      expect(reply.usage).toEqual({ promptTokens: 12, completionTokens: 20, cachedPromptTokens: 0 });
      await remote.close();
    });

    it(`stream() gives the same deltas, trimmed (${how})`, async () => {
      split = spread;
      const remote = await RemotePipeline.create({ remote: { baseURL, model: 'qwen3' } });
      const parts: StreamPart[] = [];
      for await (const part of remote.stream([{ role: 'user', content: 'What is the capital of Japan?' }])) parts.push(part);
      const text = (type: string) => parts.flatMap((p) => (p.type === type && 'text' in p ? [p.text] : [])).join('');
      expect(text('reasoning-delta')).toBe(inProcess.reasoning);
      expect(text('text-delta')).toBe(inProcess.content);
      expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
      await remote.close();
    });
  }

  it('leaves a completion as the server sent it', async () => {
    split = true;
    const remote = await RemotePipeline.create({ remote: { baseURL, model: 'qwen3' } });
    const result = await remote.generate('The capital of Japan');
    expect(result.text).toBe(CONTENT);
    await remote.close();
  });
});
