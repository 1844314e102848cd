/**
 * One generation on the OpenVINO backend (docs/openvino.md):
 *
 *   npx tsx examples/openvino.ts [IR folder] [device] [kv precision] [inference precision]
 *   npx tsx examples/openvino.ts models/weft-demo-openvino/int4 openvino:GPU u8 f32
 *
 * Inference precision defaults to f32: the tiny demo model derails under bf16 / f16 compute.
 * Prints the cache layout the plugin chose, then a tool-calling chat turn: finish reason,
 * usage, reasoning and the parsed tool call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenVinoBackend, Pipeline, type InferencePrecision, type KvPrecision, type ToolDefinition } from 'weft';

const model = process.argv[2] ?? 'models/weft-demo-openvino/int4';
const device = process.argv[3] ?? 'openvino:CPU';
const precision = (process.argv[4] ?? 'u8') as KvPrecision;
const inferencePrecision = (process.argv[5] ?? 'f32') as InferencePrecision;

const probe = await OpenVinoBackend.load(model, { device, kvPrecision: precision, inferencePrecision });
console.log(`OpenVINO ${probe.openvinoVersion} on ${probe.device}; cache:`, probe.cacheInputs.slice(0, 2), `${probe.shape.kvBlockSize}-token blocks`);
await probe.dispose();

await using pipe = await Pipeline.create({
  model,
  device,
  openvino: { inferencePrecision },
  kvCache: { size: '256MB', precision },
  parsers: { tool: 'qwen3coder', reasoning: 'qwen3' },
});
const tools = JSON.parse(readFileSync(join(model, 'tools.json'), 'utf8')) as ToolDefinition[];
const reply = await pipe.chat([{ role: 'user', content: 'What is the weather in Paris?' }], { tools, temperature: 0, maxTokens: 96 });
console.log(reply.finishReason, reply.usage);
console.log('reasoning:', JSON.stringify(reply.reasoning));
console.log('tool calls:', JSON.stringify(reply.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments }))));
