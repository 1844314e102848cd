/**
 * A small agent loop with weft's own demo model: several conversations at once, each one
 * reasoning, calling tools (run here, in TypeScript), reading the results and answering.
 * One conversation is aborted midway; the others carry on in the same batch.
 *
 *   npx tsx examples/agent.ts [model folder]   (default: weft's demo model)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AbortError, Pipeline, demoModelPath, type ChatMessage, type ToolCall, type ToolDefinition } from 'weft';

const model = process.argv[2] ?? demoModelPath();
const tools = JSON.parse(readFileSync(join(model, 'tools.json'), 'utf8')) as ToolDefinition[];

// The demo's tools. The model learnt from results shaped exactly like these.
const round2 = (x: number) => Math.round(x * 100) / 100;
const toolImplementations: Record<string, (args: Record<string, any>) => Record<string, unknown>> = {
  calculator: ({ operation, a, b }) => ({
    result: round2({ add: a + b, subtract: a - b, multiply: a * b, divide: a / b }[operation as string] ?? NaN),
  }),
  convert_units: ({ value, from_unit, to_unit }) => {
    const factors: Record<string, number> = { 'kilometers>miles': 0.621371, 'miles>kilometers': 1.609344, 'kilograms>pounds': 2.20462 };
    if (from_unit === 'celsius' && to_unit === 'fahrenheit') return { value: round2((value * 9) / 5 + 32), unit: to_unit };
    const factor = factors[`${from_unit}>${to_unit}`];
    return factor ? { value: round2(value * factor), unit: to_unit } : { error: `cannot convert ${from_unit} to ${to_unit}` };
  },
  get_weather: ({ city, unit = 'celsius' }) => {
    const h = [...(city as string)].reduce((sum, ch, i) => sum + (i + 1) * ch.charCodeAt(0), 0);
    const celsius = (h % 35) - 5;
    const temperature = unit === 'fahrenheit' ? round2((celsius * 9) / 5 + 32) : celsius;
    return { city, temperature, unit, condition: ['sunny', 'cloudy', 'rainy', 'windy', 'snowy'][h % 5] };
  },
  create_event: ({ title, date }) => ({ status: 'created', title, date }),
  send_email: ({ to }) => ({ status: 'sent', to }),
};

await using pipe = await Pipeline.create({ model, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });

/** Runs one conversation to its answer: generate, execute tool calls, feed results back. */
async function agent(question: string, signal?: AbortSignal): Promise<string> {
  const messages: ChatMessage[] = [{ role: 'user', content: question }];
  for (let round = 0; round < 4; round++) {
    const reply = await pipe.chat(messages, { tools, temperature: 0, maxTokens: 512, ...(signal && { signal }) });
    messages.push({ role: 'assistant', content: reply.content ?? '', reasoning: reply.reasoning ?? '', toolCalls: reply.toolCalls });
    if (reply.toolCalls.length === 0) return `${reply.content}   (thought: ${reply.reasoning})`;
    for (const call of reply.toolCalls) messages.push(runTool(call));
  }
  return '(gave up after 4 rounds)';
}

function runTool(call: ToolCall): ChatMessage {
  const implementation = toolImplementations[call.name];
  const result = implementation ? implementation(call.arguments) : { error: `unknown tool ${call.name}` };
  console.log(`  tool ${call.name}(${JSON.stringify(call.arguments)}) -> ${JSON.stringify(result)}`);
  return { role: 'tool', content: JSON.stringify(result), toolCallId: call.id, name: call.name };
}

const questions = [
  "What's the weather in Paris in fahrenheit? Also, convert 12 km to miles.",
  'What is 37 times 12.5?',
  'Send an urgent email to Zoe about the budget.',
  'What is the capital of Japan?',
];
const impatient = new AbortController();
setTimeout(() => impatient.abort(), 50); // give up on the email 50 ms in, while it is being generated

const answers = await Promise.all(
  questions.map((question, i) =>
    agent(question, i === 2 ? impatient.signal : undefined).catch((error: unknown) => {
      if (error instanceof AbortError) return '(aborted; the other conversations carried on)';
      throw error;
    }),
  ),
);
questions.forEach((question, i) => console.log(`\n${question}\n-> ${answers[i]}`));
const stats = pipe.stats();
console.log(`\n${stats.generatedTokens} tokens in ${stats.steps} steps, ${stats.preemptions} preemptions`);
