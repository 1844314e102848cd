/**
 * Generate, then stream, from a Hugging Face model folder.
 *
 *   npx tsx examples/generate.ts [model folder]   (default: weft's demo model)
 */
import { Pipeline, demoModelPath } from 'weft';

const model = process.argv[2] ?? demoModelPath();
await using pipe = await Pipeline.create({ model, kvCache: { size: '64MB' } });

const result = await pipe.generate('Once upon a time', { maxTokens: 32, temperature: 0 });
console.log(JSON.stringify(result.text), result.finishReason, result.usage);

for await (const part of pipe.stream('The weather today', { maxTokens: 32, temperature: 0.8, seed: 7 })) {
  if (part.type === 'text-delta') process.stdout.write(part.text);
  if (part.type === 'finish') console.log(`\n[${part.finishReason}, ${part.usage.completionTokens} tokens]`);
}
