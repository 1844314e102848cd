/**
 * Parsers inferred from the model folder when a pipeline is created without a `parsers` option:
 * the demo model's chat template writes qwen3coder calls and its vocabulary has <think>, so a chat
 * with tools comes back with parsed calls and reasoning, not raw markup in the content.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline, type ToolDefinition } from '../../src/index.js';
import { demoModelPath } from '../../src/package-files.js';

const model = demoModelPath();
const present = existsSync(join(model, 'model.safetensors'));
const tools: ToolDefinition[] = present ? JSON.parse(readFileSync(join(model, 'tools.json'), 'utf8')) : [];
const ask = [{ role: 'user' as const, content: 'What is 12 times 7? Use the calculator.' }];

describe.skipIf(!present)('default parsers of a model folder', () => {
  let pipeline: Pipeline;
  const logged: string[] = [];
  beforeAll(async () => {
    pipeline = await Pipeline.create({ model, threads: 2, logger: (line) => logged.push(line) });
  });
  afterAll(async () => {
    await pipeline?.close();
  });

  it('reads the tool call of a chat with tools though no parsers were given', async () => {
    const reply = await pipeline.chat(ask, { tools, maxTokens: 160, temperature: 0 });
    expect(reply.content ?? '').not.toContain('<tool_call>');
    expect(reply.content ?? '').not.toContain('<think>');
    expect(reply.finishReason).toBe('tool_calls');
    expect(reply.toolCalls.length).toBeGreaterThan(0);
    expect(reply.toolCalls[0]!.name).toBe('calculator');
    expect(logged.filter((line) => line.includes('no tool parser'))).toEqual([]);
  });

  it('"none" turns the inferred tool parser off for a request, and a chat with tools but no parser warns once', async () => {
    const lines: string[] = [];
    pipeline.on('log', (line) => lines.push(line));
    for (let i = 0; i < 2; i++) {
      const reply = await pipeline.chat(ask, { tools, maxTokens: 160, temperature: 0, parsers: { tool: 'none' } });
      expect(reply.toolCalls).toEqual([]);
      expect(reply.content ?? '').toContain('<tool_call>');
    }
    // 'none' was asked for: that is not the missing-parser case.
    expect(lines.filter((line) => line.includes('no tool parser'))).toEqual([]);
  });
});

describe.skipIf(!present)('a pipeline whose tool parser cannot be inferred', () => {
  it('warns once, through its logger and its log event, when a chat offers tools', async () => {
    const logged: string[] = [];
    // Given parsers are used as they are: no tool parser here.
    const pipeline = await Pipeline.create({ model, threads: 2, parsers: { reasoning: 'qwen3' }, logger: (line) => logged.push(line) });
    try {
      const events: string[] = [];
      pipeline.on('log', (line) => events.push(line));
      for (let i = 0; i < 2; i++) await pipeline.chat(ask, { tools, maxTokens: 8, temperature: 0 });
      await pipeline.chat(ask, { maxTokens: 4, temperature: 0 });
      expect(logged.filter((line) => line.includes('no tool parser'))).toHaveLength(1);
      expect(events.filter((line) => line.includes('no tool parser'))).toHaveLength(1);
    } finally {
      await pipeline.close();
    }
  });
});
