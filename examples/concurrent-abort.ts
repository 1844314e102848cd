/**
 * Many requests at once, woven into one batch; one is cancelled midway and
 * the others carry on untouched.
 *
 *   npx tsx examples/concurrent-abort.ts [model folder]   (default: weft's demo model)
 */
import { AbortError, Pipeline, demoModelPath } from 'weft';

const model = process.argv[2] ?? demoModelPath();
await using pipe = await Pipeline.create({ model, scheduler: { maxNumSeqs: 8 } });

const prompts = ['Once upon a time', 'The little dog', 'In the morning', 'She opened the door'];
const impatient = new AbortController();

const runs = prompts.map(async (prompt, i) => {
  let text = '';
  try {
    for await (const part of pipe.stream(prompt, { maxTokens: 48, ignoreEos: true, temperature: 0, ...(i === 1 && { signal: impatient.signal }) })) {
      if (part.type === 'text-delta') {
        text += part.text;
        if (i === 1 && text.length > 20) impatient.abort(); // give up on this one
      }
    }
    return `#${i} finished: ${JSON.stringify(text)}`;
  } catch (error) {
    if (error instanceof AbortError) return `#${i} aborted after ${JSON.stringify(text)}`;
    throw error;
  }
});

for (const line of await Promise.all(runs)) console.log(line);
const stats = pipe.stats();
console.log(`steps ${stats.steps}, preemptions ${stats.preemptions}, KV blocks in use ${stats.kv.pools[0]!.usedBlocks}`);
