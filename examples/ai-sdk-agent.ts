/**
 * A multi-step agent on the Vercel AI SDK (`ai` 6) with weft as its model: the
 * AI SDK runs the loop (generate, execute the tools, send the results back,
 * generate again) until the model answers or five steps have run. Several
 * agents share one pipeline, so their requests are batched together.
 *
 *   npx tsx examples/ai-sdk-agent.ts [model folder]   (default: weft's demo model)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchema, stepCountIs, streamText, tool, type ToolSet } from 'ai';
import { Pipeline, demoModelPath, type ToolDefinition } from 'weft';
import { weft } from 'weft/ai-sdk';

const modelDir = process.argv[2] ?? demoModelPath();

// The demo model knows five tools; their schemas come from its tools.json. In your app,
// define tools with zod or jsonSchema as usual.
const definitions = JSON.parse(readFileSync(join(modelDir, 'tools.json'), 'utf8')) as ToolDefinition[];
const round2 = (x: number) => Math.round(x * 100) / 100;
const run: Record<string, (input: Record<string, any>) => unknown> = {
  calculator: ({ operation, a, b }) => ({ result: round2(({ add: a + b, subtract: a - b, multiply: a * b, divide: a / b } as Record<string, number>)[operation] ?? NaN) }),
  convert_units: ({ value, from_unit, to_unit }) =>
    from_unit === 'kilometers' && to_unit === 'miles' ? { value: round2(value * 0.621371), unit: to_unit } : { error: `cannot convert ${from_unit} to ${to_unit}` },
  get_weather: ({ city, unit = 'celsius' }) => ({ city, temperature: unit === 'fahrenheit' ? 64.4 : 18, unit, condition: 'sunny' }),
  create_event: ({ title, date }) => ({ status: 'created', title, date }),
  send_email: ({ to }) => ({ status: 'sent', to }),
};
const tools: ToolSet = Object.fromEntries(
  definitions.map(({ function: fn }) => [
    fn.name,
    tool({
      description: fn.description ?? '',
      inputSchema: jsonSchema<Record<string, any>>(fn.parameters as object),
      execute: async (input) => run[fn.name]!(input),
    }),
  ]),
);

// The app opens the pipeline and closes it; the model only borrows it.
await using pipe = await Pipeline.create({ model: modelDir, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
const model = weft(pipe);

async function agent(n: number, question: string): Promise<void> {
  const result = streamText({
    model,
    prompt: question,
    tools,
    stopWhen: stepCountIs(5),
    temperature: 0,
    onStepFinish: (step) => {
      for (const call of step.toolCalls) console.log(`[${n}] called ${call.toolName}(${JSON.stringify(call.input)})`);
      for (const result of step.toolResults) console.log(`[${n}]   -> ${JSON.stringify(result.output)}`);
    },
  });
  let answer = '';
  for await (const part of result.fullStream) if (part.type === 'text-delta') answer += part.text;
  const usage = await result.totalUsage;
  console.log(`[${n}] ${question}\n[${n}] => ${answer.trim()}  (${(await result.steps).length} steps, ${usage.inputTokens} prompt tokens of which ${usage.cachedInputTokens ?? 0} cached, ${usage.outputTokens} generated)`);
}

await Promise.all(
  ["What's the weather in Paris in fahrenheit? Also, convert 12 km to miles.", 'What is 37 times 12.5?', 'What is the capital of Japan?'].map(
    (question, i) => agent(i + 1, question),
  ),
);
