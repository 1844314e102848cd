/**
 * Tool-guided generation with weft's demo model: the model reasons and answers freely, and
 * when it starts a tool call, the call is written in its tool parser's syntax (qwen3coder here),
 * to one of the declared tools, with arguments valid against that tool's JSON schema. At
 * temperature 1 over many seeds, every call it makes parses and validates.
 *
 *   npx tsx examples/guided-tools.ts [model folder]   (default: weft's demo model)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pipeline, demoModelPath, type ToolDefinition } from 'weft';

const model = process.argv[2] ?? demoModelPath();
const tools = JSON.parse(readFileSync(join(model, 'tools.json'), 'utf8')) as ToolDefinition[];

// guidedTools: true makes every chat with tools tool-guided (a request may say guidedTools: false).
await using pipe = await Pipeline.create({ model, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' }, guidedTools: true });

const questions = ['What is 37 times 12.5?', 'What is the weather in Oslo?', 'Convert 3 miles to kilometers.', 'Hi!'];
const replies = await Promise.all(
  Array.from({ length: 24 }, (_, seed) => pipe.chat([{ role: 'user', content: questions[seed % questions.length]! }], { tools, temperature: 1, seed, maxTokens: 200 })),
);
const calls = replies.flatMap((r) => r.toolCalls);
console.log(`24 replies at temperature 1: ${calls.length} tool calls, ${replies.filter((r) => r.toolCalls.length === 0).length} plain answers`);
for (const call of calls.slice(0, 4)) console.log(`  ${call.name}(${JSON.stringify(call.arguments)})`);

// "required": every reply calls. Parallel calls are on by default (OpenAI's parallel_tool_calls):
// after a call the model may make another; parallelToolCalls: false allows exactly one.
for (const parallelToolCalls of [true, false]) {
  const forced = await Promise.all(
    Array.from({ length: 12 }, (_, seed) => pipe.chat([{ role: 'user', content: 'What is the weather in Oslo?' }], { tools, toolChoice: 'required', parallelToolCalls, temperature: 1, seed })),
  );
  const counts = forced.map((r) => r.toolCalls.length);
  console.log(`required, parallelToolCalls ${parallelToolCalls}: calls per reply ${counts.join(' ')}`);
}
