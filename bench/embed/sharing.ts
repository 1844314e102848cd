/**
 * The cost of embedding on a pipeline that is generating: the 8 demo questions chatted (greedy,
 * so both runs produce the same tokens), alone and while the same pipeline embeds `texts` texts
 * in calls of 50. Embedding requests are prompt-only work in the same batch (docs/embeddings.md),
 * so the chats slow down by the share of each step the embeddings take.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pipeline } from '../../src/index.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface SharingResult {
  readonly alone: number;
  readonly shared: number;
  readonly embeddingsPerSecond: number;
  readonly chatTokens: number;
  readonly texts: number;
}

export async function measureSharing(model: string, threads: number, texts: number): Promise<SharingResult> {
  const questions = JSON.parse(readFileSync(join(repo, 'tools', 'demo-model', 'demo_questions.json'), 'utf8')) as string[];
  const tools = JSON.parse(readFileSync(join(model, 'tools.json'), 'utf8')) as object[];
  const pipe = await Pipeline.create({ model, threads });
  const chats = async () => {
    const started = performance.now();
    const replies = await Promise.all(questions.map((q) => pipe.chat([{ role: 'user', content: q }], { tools: tools as never, temperature: 0, maxTokens: 96 })));
    const tokens = replies.reduce((sum, r) => sum + r.usage.completionTokens, 0);
    return { tokensPerSecond: tokens / ((performance.now() - started) / 1000), tokens };
  };
  const inputs = Array.from({ length: texts }, (_, i) => `Passage ${i}: ${questions[i % questions.length]} (note ${i * 7919 % 1000})`);
  const embedAll = async () => {
    const started = performance.now();
    for (let i = 0; i < inputs.length; i += 50) await pipe.embed(inputs.slice(i, i + 50));
    return texts / ((performance.now() - started) / 1000);
  };
  try {
    await chats(); // warm-up
    const alone: number[] = [];
    const shared: number[] = [];
    let embeddingsPerSecond = 0;
    let chatTokens = 0;
    for (let round = 0; round < 3; round++) {
      const plain = await chats();
      alone.push(plain.tokensPerSecond);
      chatTokens = plain.tokens / questions.length;
      const [withEmbedding, rate] = await Promise.all([chats(), embedAll()]);
      shared.push(withEmbedding.tokensPerSecond);
      embeddingsPerSecond = rate;
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    return { alone: median(alone), shared: median(shared), embeddingsPerSecond, chatTokens: Math.round(chatTokens), texts };
  } finally {
    await pipe.close();
  }
}
