/**
 * Tool-call accuracy of the demo model through weft on the OpenVINO backend: on the
 * int8 and int4 IR it stays within 2 points of the f32 IR's figure. The turns are the
 * 141 tool turns of the held-out set (tools/demo-model/heldout.jsonl): exact tool names
 * and typed arguments, in order. f32 inference and f32 KV cache hints, so only the
 * weight compression differs. bench/openvino/accuracy.bench.ts prints the full table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { expect, it } from 'vitest';
import { Pipeline, type ChatMessage, type ToolDefinition } from '../../src/index.js';
import { DEMO_HF, DEMO_IR, describeOpenVino, REPO_ROOT } from './helpers.js';

interface HfMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  reasoning_content?: string;
  tool_calls?: { function: { name: string; arguments: Record<string, unknown> } }[];
}

/** The tool turns after each conversation's last user message, with the conversation before them. */
function toolTurns(): Array<{ history: ChatMessage[]; expected: Array<{ name: string; arguments: Record<string, unknown> }> }> {
  const turns = [];
  for (const line of readFileSync(join(REPO_ROOT, 'tools', 'demo-model', 'heldout.jsonl'), 'utf8').trim().split('\n')) {
    const { messages } = JSON.parse(line) as { messages: HfMessage[] };
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    for (let k = lastUser + 1; k < messages.length; k++) {
      const m = messages[k]!;
      if (m.role !== 'assistant' || !m.tool_calls) continue;
      const history: ChatMessage[] = messages.slice(0, k).map((h, i) =>
        h.role !== 'assistant'
          ? { role: h.role, content: h.content }
          : {
              role: 'assistant',
              content: h.content,
              ...(h.reasoning_content !== undefined && { reasoning: h.reasoning_content }),
              ...(h.tool_calls && { toolCalls: h.tool_calls.map((c, j) => ({ id: `call_${i}_${j}`, name: c.function.name, arguments: c.function.arguments })) }),
            },
      );
      turns.push({ history, expected: m.tool_calls.map((c) => ({ name: c.function.name, arguments: c.function.arguments })) });
    }
  }
  return turns;
}

describeOpenVino('int8 / int4 IR tool-call accuracy within 2 points of f32', () => {
  const tools = JSON.parse(readFileSync(join(DEMO_HF, 'tools.json'), 'utf8')) as ToolDefinition[];
  const turns = toolTurns();

  async function accuracy(weights: 'f32' | 'int8' | 'int4'): Promise<number> {
    const pipe = await Pipeline.create({
      model: DEMO_IR(weights),
      device: 'openvino:CPU',
      threads: 2,
      openvino: { inferencePrecision: 'f32' },
      kvCache: { size: '128MB', precision: 'f32' },
      parsers: { tool: 'qwen3coder', reasoning: 'qwen3' },
    });
    try {
      const results = await Promise.all(turns.map((t) => pipe.chat(t.history, { tools, temperature: 0, maxTokens: 512 })));
      const right = results.filter((r, i) => isDeepStrictEqual(r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })), turns[i]!.expected));
      return (100 * right.length) / turns.length;
    } finally {
      await pipe.close();
    }
  }

  it('141 tool turns on f32, int8 and int4', async () => {
    expect(turns.length).toBe(141);
    const f32 = await accuracy('f32');
    expect(f32).toBeGreaterThanOrEqual(95);
    for (const weights of ['int8', 'int4'] as const) expect(await accuracy(weights), weights).toBeGreaterThanOrEqual(f32 - 2);
  }, 600_000);
});
