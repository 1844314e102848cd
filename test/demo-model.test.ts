/**
 * weft's own demo model (models/weft-demo) evaluated through weft itself: greedy chat() with the
 * qwen3coder and qwen3 parsers on the 200 held-out generated conversations
 * (tools/demo-model/heldout.jsonl), all turns submitted at once so the engine batches them.
 * Thresholds from the issue: exact tool name and arguments in >= 95% of tool turns, the right
 * "no tool" decision in >= 95% of the others, non-empty reasoning; stream() agrees with chat().
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline, type ChatMessage, type ChatResult, type ToolDefinition } from '../src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const modelDir = join(root, 'models', 'weft-demo');
const heldoutFile = join(root, 'tools', 'demo-model', 'heldout.jsonl');
const transformersFile = join(root, 'tools', 'demo-model', 'eval_transformers.json');
const present = existsSync(join(modelDir, 'model.safetensors')) && existsSync(heldoutFile);
if (!present) console.warn('demo-model.test: models/weft-demo or its held-out set is missing; skipping');

/** Hugging Face-shaped messages, as datagen.py writes them. */
interface HfMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  reasoning_content?: string;
  tool_calls?: { type: 'function'; function: { name: string; arguments: Record<string, unknown> } }[];
}

interface Turn {
  id: string;
  /** The conversation before the assistant turn, in weft's shape. */
  history: ChatMessage[];
  expected: HfMessage;
}

function toWeft(messages: HfMessage[]): ChatMessage[] {
  return messages.map((m, i) => {
    if (m.role !== 'assistant') return { role: m.role, content: m.content };
    return {
      role: 'assistant',
      content: m.content,
      ...(m.reasoning_content !== undefined && { reasoning: m.reasoning_content }),
      ...(m.tool_calls && {
        toolCalls: m.tool_calls.map((c, j) => ({ id: `call_${i}_${j}`, name: c.function.name, arguments: c.function.arguments })),
      }),
    };
  });
}

/** Every assistant turn after a conversation's last user message (the turns the model was trained on). */
function heldoutTurns(): Turn[] {
  const turns: Turn[] = [];
  for (const line of readFileSync(heldoutFile, 'utf8').trim().split('\n')) {
    const { id, messages } = JSON.parse(line) as { id: string; messages: HfMessage[] };
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    messages.forEach((m, k) => {
      if (k > lastUser && m.role === 'assistant') turns.push({ id, history: toWeft(messages.slice(0, k)), expected: m });
    });
  }
  return turns;
}

const calls = (result: { toolCalls: { name: string; arguments: Record<string, unknown> }[] }) =>
  result.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments }));

describe.skipIf(!present)('weft-demo model through chat()', () => {
  const tools = present ? (JSON.parse(readFileSync(join(modelDir, 'tools.json'), 'utf8')) as ToolDefinition[]) : [];
  const turns = present ? heldoutTurns() : [];
  const options = { tools, temperature: 0, maxTokens: 512 } as const;
  let pipe: Pipeline;
  let results: ChatResult[];

  beforeAll(async () => {
    pipe = await Pipeline.create({ model: modelDir, threads: 2, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
    results = await Promise.all(turns.map((t) => pipe.chat(t.history, options)));
  }, 600_000);
  afterAll(async () => {
    await pipe?.close();
  });

  it('covers 200 conversations with both kinds of turn', () => {
    expect(new Set(turns.map((t) => t.id)).size).toBe(200);
    expect(turns.filter((t) => t.expected.tool_calls).length).toBeGreaterThan(100);
    expect(turns.filter((t) => !t.expected.tool_calls).length).toBeGreaterThan(100);
  });

  it('calls the expected tools with the exact arguments in >= 95% of tool turns', () => {
    const toolTurns = turns.map((t, i) => ({ t, r: results[i]! })).filter(({ t }) => t.expected.tool_calls);
    const right = toolTurns.filter(({ t, r }) => {
      const want = t.expected.tool_calls!.map((c) => ({ name: c.function.name, arguments: c.function.arguments }));
      return isDeepStrictEqual(calls(r), want) && r.finishReason === 'tool_calls';
    });
    console.log(`demo model: ${right.length}/${toolTurns.length} tool turns exact`);
    expect(right.length / toolTurns.length).toBeGreaterThanOrEqual(0.95);
  });

  it('answers without a tool in >= 95% of the other turns, mostly word for word', () => {
    const others = turns.map((t, i) => ({ t, r: results[i]! })).filter(({ t }) => !t.expected.tool_calls);
    const noTool = others.filter(({ r }) => r.toolCalls.length === 0 && r.finishReason === 'stop');
    const exact = others.filter(({ t, r }) => r.content === t.expected.content);
    console.log(`demo model: ${noTool.length}/${others.length} no-tool turns right, ${exact.length} answers word for word`);
    expect(noTool.length / others.length).toBeGreaterThanOrEqual(0.95);
    expect(exact.length / others.length).toBeGreaterThanOrEqual(0.9);
  });

  it('reasons before acting (non-empty reasoning, no parser warnings)', () => {
    const reasoned = results.filter((r) => (r.reasoning ?? '').trim().length > 0);
    expect(reasoned.length / results.length).toBeGreaterThanOrEqual(0.95);
    expect(results.filter((r) => r.warnings.length > 0).length / results.length).toBeLessThanOrEqual(0.05);
  });

  it.skipIf(!existsSync(transformersFile))('generates what transformers generated (f32 greedy) on nearly every turn', () => {
    const reference = JSON.parse(readFileSync(transformersFile, 'utf8')) as { outputs: { id: string; output: string }[] };
    expect(reference.outputs.length).toBe(turns.length);
    const same = reference.outputs.filter((o, i) => {
      expect(o.id).toBe(turns[i]!.id);
      return o.output.replace(/<\|im_end\|>$/, '') === results[i]!.text;
    });
    console.log(`demo model: ${same.length}/${turns.length} outputs identical to transformers'`);
    expect(same.length / turns.length).toBeGreaterThanOrEqual(0.95);
  });

  it('stream() and chat() agree', async () => {
    const picked = [0, 1, 2, 3, 5, 8, 13, 21].map((i) => i % turns.length);
    const streamed = await Promise.all(
      picked.map(async (i) => {
        let reasoning = '';
        let content = '';
        const toolCalls: { name: string; arguments: Record<string, unknown> }[] = [];
        let finish = '';
        for await (const part of pipe.stream(turns[i]!.history, options)) {
          if (part.type === 'reasoning-delta') reasoning += part.text;
          else if (part.type === 'text-delta') content += part.text;
          else if (part.type === 'tool-call') toolCalls.push({ name: part.name, arguments: part.arguments });
          else if (part.type === 'finish') finish = part.finishReason;
        }
        return { reasoning, content, toolCalls, finish };
      }),
    );
    const kinds = new Set(picked.map((i) => (turns[i]!.expected.tool_calls ? 'tool' : 'answer')));
    expect(kinds.size).toBe(2);
    picked.forEach((i, k) => {
      const r = results[i]!;
      const s = streamed[k]!;
      expect(s.reasoning).toBe(r.reasoning ?? '');
      expect(s.content).toBe(r.content ?? '');
      expect(s.toolCalls).toEqual(calls(r));
      expect(s.finish).toBe(r.finishReason);
    });
  });
});

describe.skipIf(!present)('weft demo (the agent loop in the terminal)', () => {
  it('answers every question from its tool results, aborts one midway, and prints stats', async () => {
    const { runCli } = await import('../src/cli/run-cli.js');
    const { runDemoTool } = await import('../src/cli/demo.js');
    const { testIo } = await import('./cli/cli-harness.js');
    const io = testIo();
    expect(await runCli(['demo', '--threads', '2'], io)).toBe(0);
    const out = io.out();
    const lines = (n: number) => out.split('\n').filter((line) => line.startsWith(`[${n}] `));
    // The answer: the conversation's plain text lines (wrapped at the terminal width), joined.
    const answer = (n: number) =>
      lines(n)
        .map((line) => line.slice(`[${n}] `.length))
        .filter((text) => !/^(\(thinking\)|→|\?|✂) /.test(text))
        .join(' ');
    // Conversation 3 is the one cancelled on purpose; the others finish with answers.
    expect(lines(3).at(-1)).toContain('aborted midway');
    const product = runDemoTool('calculator', { operation: 'multiply', a: 37, b: 12.5 }).result;
    expect(lines(2)).toContain(`[2] → calculator({"operation":"multiply","a":37,"b":12.5}) = {"result":${product}}`);
    expect(answer(2)).toContain(`is ${product}.`);
    const miles = runDemoTool('convert_units', { value: 12, from_unit: 'kilometers', to_unit: 'miles' }).value;
    expect(answer(1)).toContain(`is ${miles} miles.`);
    const tokyo = runDemoTool('get_weather', { city: 'Tokyo', days: 3 });
    expect(answer(5)).toContain(`highs of ${tokyo.high} and lows of ${tokyo.low}`);
    expect(answer(4)).toContain('Tokyo');
    expect(answer(3)).toBe('');
    expect(lines(6).filter((line) => line.includes('→ ')).length).toBe(2);
    expect(out).toContain('(thinking) ');
    expect(io.err()).toMatch(/6 conversations \(1 aborted\), \d+ requests, \d+ tokens in [\d.]+ s = [\d.]+ tokens\/s, preemptions \d+, KV peak \d+\/\d+ blocks/);
  });
});
