/**
 * ChatWeft with weft's `n` (docs/parallel-sampling.md): generate() returns one
 * generation per choice (as ChatOpenAI does), each the pipeline's choice;
 * stream() refuses n > 1 by name (LangChain streams one message).
 */
import { HumanMessage, type AIMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/index.js';
import { ChatWeft } from '../../src/langchain/index.js';
import { ChatTemplate } from '../../src/text/chat-template.js';
import { harness, type Harness } from '../support/harness.js';

describe('ChatWeft with n > 1', () => {
  let h: Harness;
  let model: ChatWeft;
  const weft = { temperature: 1, maxTokens: 10, ignoreEos: true, seed: 5, n: 3 };

  beforeAll(async () => {
    h = await harness({ chatTemplate: new ChatTemplate('{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>') });
    model = new ChatWeft({ pipeline: h.pipe });
  });
  afterAll(async () => {
    await h?.pipe.close();
  });

  it('generate() gives n generations, each the pipeline choice with seed + i', async () => {
    const result = await model.generate([[new HumanMessage('three answers')]], { weft });
    const generations = result.generations[0]!;
    const local = await h.pipe.chat([{ role: 'user', content: 'three answers' }], weft);
    expect(generations.map((g) => g.text)).toEqual(local.choices!.map((c) => c.content));
    for (const g of generations) expect((g as unknown as { message: AIMessage }).message.usage_metadata?.output_tokens).toBe(10);
    expect(new Set(generations.map((g) => g.text)).size).toBeGreaterThan(1);
  });

  it('invoke() returns the first choice; stream() refuses n > 1 by name', async () => {
    const first = await model.invoke([new HumanMessage('three answers')], { weft });
    const local = await h.pipe.chat([{ role: 'user', content: 'three answers' }], weft);
    expect(first.content).toBe(local.choices![0]!.content);
    const streaming = (async () => {
      for await (const _ of await model.stream([new HumanMessage('x')], { weft })) void _;
    })();
    await expect(streaming).rejects.toMatchObject({ option: 'n' });
    await expect(streaming).rejects.toBeInstanceOf(InvalidOptionError);
  });
});
