/**
 * The demo model's held-out evaluation (tools/demo-model/heldout.jsonl, 341 assistant turns)
 * through weft's chat() on each backend and IR, all turns submitted at once:
 *   cpu            weft's CPU backend on models/weft-demo (safetensors, f32): the reference
 *   ov f32 exact   OpenVINO, f32 IR, f32 inference and f32 KV cache (hints)
 *   ov f32 + u8    OpenVINO, f32 IR, f32 inference, u8 KV cache
 *   ov f32 default OpenVINO, f32 IR, the plugin's default inference precision (bf16 on CPUs
 *                  with AVX512-BF16 / AMX), u8 KV cache
 *   ov int8 / int4 OpenVINO, int8 / int4 IR, f32 inference and f32 KV cache
 * Prints tool-turn accuracy (exact names and typed arguments), the right "no tool" decision on
 * the other turns, and how many replies are identical (text) to the CPU backend's.
 *
 *   npx tsx bench/openvino/accuracy.bench.ts
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Pipeline, type ChatMessage, type ChatResult, type PipelineOptions, type ToolDefinition } from '../../src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HF = join(root, 'models', 'weft-demo');
const IR = (w: string) => join(root, 'models', 'weft-demo-openvino', w);

interface HfMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  reasoning_content?: string;
  tool_calls?: { function: { name: string; arguments: Record<string, unknown> } }[];
}

function toWeft(messages: HfMessage[]): ChatMessage[] {
  return messages.map((m, i) =>
    m.role !== 'assistant'
      ? { role: m.role, content: m.content }
      : {
          role: 'assistant',
          content: m.content,
          ...(m.reasoning_content !== undefined && { reasoning: m.reasoning_content }),
          ...(m.tool_calls && { toolCalls: m.tool_calls.map((c, j) => ({ id: `call_${i}_${j}`, name: c.function.name, arguments: c.function.arguments })) }),
        },
  );
}

const turns: Array<{ history: ChatMessage[]; expected: HfMessage }> = [];
for (const line of readFileSync(join(root, 'tools', 'demo-model', 'heldout.jsonl'), 'utf8').trim().split('\n')) {
  const { messages } = JSON.parse(line) as { messages: HfMessage[] };
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  messages.forEach((m, k) => {
    if (k > lastUser && m.role === 'assistant') turns.push({ history: toWeft(messages.slice(0, k)), expected: m });
  });
}
const tools = JSON.parse(readFileSync(join(HF, 'tools.json'), 'utf8')) as ToolDefinition[];

async function evaluate(options: PipelineOptions): Promise<{ results: ChatResult[]; seconds: number }> {
  const pipe = await Pipeline.create({ threads: 2, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' }, kvCache: { size: '128MB', ...options.kvCache }, ...options });
  const start = performance.now();
  const results = await Promise.all(turns.map((t) => pipe.chat(t.history, { tools, temperature: 0, maxTokens: 512 })));
  const seconds = (performance.now() - start) / 1000;
  await pipe.close();
  return { results, seconds };
}

function score(results: ChatResult[]) {
  let toolTurns = 0, toolOk = 0, otherTurns = 0, otherOk = 0;
  results.forEach((r, i) => {
    const want = (turns[i]!.expected.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments }));
    const got = r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments }));
    if (want.length > 0) {
      toolTurns++;
      if (isDeepStrictEqual(got, want)) toolOk++;
    } else {
      otherTurns++;
      if (got.length === 0) otherOk++;
    }
  });
  return { toolTurns, toolOk, otherTurns, otherOk };
}

const configs: Array<[string, PipelineOptions]> = [
  ['cpu (safetensors f32)', { model: HF, kvCache: { precision: 'f32' } }],
  ['ov f32 IR, f32/f32', { model: IR('f32'), device: 'openvino:CPU', openvino: { inferencePrecision: 'f32' }, kvCache: { precision: 'f32' } }],
  ['ov f32 IR, f32 compute + u8 KV', { model: IR('f32'), device: 'openvino:CPU', openvino: { inferencePrecision: 'f32' }, kvCache: { precision: 'u8' } }],
  ['ov f32 IR, plugin defaults + u8 KV', { model: IR('f32'), device: 'openvino:CPU', kvCache: { precision: 'u8' } }],
  ['ov int8 IR, f32/f32', { model: IR('int8'), device: 'openvino:CPU', openvino: { inferencePrecision: 'f32' }, kvCache: { precision: 'f32' } }],
  ['ov int4 IR, f32/f32', { model: IR('int4'), device: 'openvino:CPU', openvino: { inferencePrecision: 'f32' }, kvCache: { precision: 'f32' } }],
];

console.log(`CPU: ${cpus()[0]?.model} (${cpus().length} logical), 2 threads; ${turns.length} turns\n`);
console.log('config | tool turns exact | no-tool right | replies identical to cpu | seconds');
let reference: ChatResult[] | undefined;
const report: unknown[] = [];
for (const [name, options] of configs) {
  const { results, seconds } = await evaluate(options);
  reference ??= results;
  const s = score(results);
  const same = results.filter((r, i) => r.text === reference![i]!.text).length;
  const pct = (a: number, b: number) => `${a}/${b} (${((100 * a) / b).toFixed(1)}%)`;
  console.log(`${name} | ${pct(s.toolOk, s.toolTurns)} | ${pct(s.otherOk, s.otherTurns)} | ${pct(same, results.length)} | ${seconds.toFixed(1)}`);
  report.push({ name, ...s, identicalToCpu: same, turns: results.length, seconds });
}
console.log(`\n1-minute load average: ${loadavg()[0]!.toFixed(1)}`);
console.log(JSON.stringify(report));
