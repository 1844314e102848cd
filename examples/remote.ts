/**
 * The same agent code in-process and over HTTP: serves the demo model with
 * WeftServer (what `weft serve` runs), then asks the same question through
 * Pipeline.create({ model }) and Pipeline.create({ remote }).
 *
 *   npx tsx examples/remote.ts
 * Against a server you started yourself (weft serve, vLLM, OVMS):
 *   npx tsx examples/remote.ts http://127.0.0.1:8000/v1 weft-demo
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pipeline, demoModelPath, type ChatMessage, type PipelineApi, type ToolDefinition } from 'weft';
import { WeftServer } from 'weft/serve';

const tools = JSON.parse(readFileSync(join(demoModelPath(), 'tools.json'), 'utf8')) as ToolDefinition[];
const question: ChatMessage[] = [{ role: 'user', content: 'What is 37 times 12.5?' }];

/** Works with any kind of pipeline (PipelineApi): only create() differs. */
async function ask(pipe: PipelineApi, label: string): Promise<void> {
  let reasoning = '';
  for await (const part of pipe.stream(question, { tools, temperature: 0, signal: AbortSignal.timeout(30_000) })) {
    if (part.type === 'reasoning-delta') reasoning += part.text;
    if (part.type === 'tool-call') console.log(`${label}: reasoning ${JSON.stringify(reasoning)}\n${label}: calls ${part.name}(${JSON.stringify(part.arguments)})`);
    if (part.type === 'finish') console.log(`${label}: ${part.finishReason}, ${part.usage.completionTokens} tokens, ${part.usage.cachedPromptTokens} prompt tokens cached`);
  }
}

const [baseURL, model] = process.argv.slice(2);
if (baseURL !== undefined) {
  await using remote = await Pipeline.create({ remote: { baseURL, model: model ?? 'weft-demo' } });
  await ask(remote, 'remote');
} else {
  await using local = await Pipeline.create({ model: demoModelPath(), parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
  await ask(local, 'in-process');
  const server = await WeftServer.start({ pipeline: local, modelName: 'weft-demo', port: 0, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
  try {
    await using remote = await Pipeline.create({ remote: { baseURL: `${server.url}/v1`, model: 'weft-demo' } });
    await ask(remote, 'over HTTP');
  } finally {
    await server.close();
  }
}
