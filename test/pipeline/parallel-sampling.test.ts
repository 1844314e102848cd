/**
 * `n` on generate / chat / stream (docs/parallel-sampling.md) over the test
 * backend: each choice equals the request run alone with seed + i, the
 * result holds every choice with the prompt counted once, stream parts carry
 * their choice, and bad `n` is refused by name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AbortError, GrammarDeadEndError, InvalidOptionError } from '../../src/errors.js';
import type { StreamPart } from '../../src/pipeline/stream-parts.js';
import { ChatTemplate } from '../../src/text/chat-template.js';
import { harness, type Harness } from '../support/harness.js';

let open: Harness[] = [];
async function make(...args: Parameters<typeof harness>): Promise<Harness> {
  const h = await harness(...args);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.map((h) => h.pipe.close()));
  open = [];
});

const SAMPLED = { temperature: 1, maxTokens: 24, ignoreEos: true } as const;

describe('n > 1 on the pipeline', () => {
  it('generate: n choices, each the solo run with seed + i; top level is choice 0, usage counts the prompt once', async () => {
    const h = await make();
    const result = await h.pipe.generate('one prompt, four choices', { ...SAMPLED, seed: 40, n: 4 });
    expect(result.choices).toHaveLength(4);
    for (let i = 0; i < 4; i++) {
      const solo = await h.pipe.generate('one prompt, four choices', { ...SAMPLED, seed: 40 + i });
      expect(result.choices![i]).toMatchObject({ index: i, text: solo.text, tokenIds: solo.tokenIds, finishReason: 'length' });
      expect(result.choices![i]!.usage.completionTokens).toBe(24);
    }
    expect(result.text).toBe(result.choices![0]!.text);
    expect(new Set(result.choices!.map((c) => c.text)).size).toBeGreaterThan(1);
    const promptTokens = h.tokenizer.encode('one prompt, four choices').length;
    expect(result.usage).toMatchObject({ promptTokens, completionTokens: 4 * 24 });
    expect(h.pipe.stats().forks).toBe(3);
    expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
  });

  it('n = 1 (or none) keeps the one-choice result: no choices field', async () => {
    const h = await make();
    const one = await h.pipe.generate('just one', { ...SAMPLED, seed: 1, n: 1 });
    expect(one.choices).toBeUndefined();
    const again = await h.pipe.generate('just one', { ...SAMPLED, seed: 1 });
    expect(one.tokenIds).toEqual(again.tokenIds);
    expect(h.pipe.stats().forks).toBe(0);
  });

  it('stream: every part names its choice, each choice ends with its own finish, texts equal generate()', async () => {
    const h = await make();
    const texts = ['', '', ''];
    const finishes: StreamPart[] = [];
    const tokens = [0, 0, 0];
    for await (const part of h.pipe.stream('streamed choices', { ...SAMPLED, seed: 9, n: 3, logprobs: 1 })) {
      expect(part.choice).toBeGreaterThanOrEqual(0);
      expect(part.choice).toBeLessThan(3);
      if (part.type === 'text-delta') texts[part.choice!] += part.text;
      if (part.type === 'token') tokens[part.choice!]! += part.tokenIds.length;
      if (part.type === 'finish') finishes.push(part);
    }
    expect(finishes.map((f) => f.choice).sort()).toEqual([0, 1, 2]);
    expect(tokens).toEqual([24, 24, 24]);
    const whole = await h.pipe.generate('streamed choices', { ...SAMPLED, seed: 9, n: 3 });
    expect(texts).toEqual(whole.choices!.map((c) => c.text));
  });

  it('chat: n parsed replies in choices', async () => {
    const h = await make({ chatTemplate: new ChatTemplate('{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>') });
    const messages = [{ role: 'user' as const, content: 'hello' }];
    const result = await h.pipe.chat(messages, { ...SAMPLED, seed: 3, n: 2 });
    expect(result.choices).toHaveLength(2);
    const second = await h.pipe.chat(messages, { ...SAMPLED, seed: 4 });
    expect(result.choices![1]).toMatchObject({ index: 1, text: second.text, content: second.content, finishReason: second.finishReason });
    expect(result.usage.completionTokens).toBe(result.choices![0]!.usage.completionTokens + result.choices![1]!.usage.completionTokens);
  });

  it('guided generation: every choice is held to the schema by its own matcher', async () => {
    const h = await make();
    const schema = { type: 'object', properties: { a: { type: 'boolean' }, b: { enum: ['x', 'yy'] } }, required: ['a', 'b'] };
    const result = await h.pipe.generate('q', { responseFormat: { type: 'json_schema', schema }, temperature: 1, seed: 11, maxTokens: 100, n: 4 });
    for (const [i, choice] of result.choices!.entries()) {
      expect(choice.finishReason).toBe('stop');
      const value = JSON.parse(choice.text) as { a: unknown; b: unknown };
      expect(typeof value.a).toBe('boolean');
      expect(['x', 'yy']).toContain(value.b);
      const solo = await h.pipe.generate('q', { responseFormat: { type: 'json_schema', schema }, temperature: 1, seed: 11 + i, maxTokens: 100 });
      expect(choice.text).toBe(solo.text);
    }
  });

  it('a choice that fails fails the request, and the other choices are cancelled: nothing is left in the cache', async () => {
    const h = await make();
    // A top-level integer with EOS ignored dead-ends once 15 digits are written.
    const failing = h.pipe.generate('x', { responseFormat: { type: 'json_schema', schema: { type: 'integer' } }, ignoreEos: true, maxTokens: 50, temperature: 1, seed: 3, n: 3 });
    await expect(failing).rejects.toBeInstanceOf(GrammarDeadEndError);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.pipe.stats()).toMatchObject({ running: 0, waiting: 0 });
    expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
  });

  it('the signal cancels every choice; breaking out of the stream does too', async () => {
    const h = await make({ backend: { delayMs: 2 } });
    const controller = new AbortController();
    const running = h.pipe.generate('cancel all', { ...SAMPLED, maxTokens: 200, n: 4, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await expect(running).rejects.toBeInstanceOf(AbortError);
    let parts = 0;
    for await (const part of h.pipe.stream('leave early', { ...SAMPLED, maxTokens: 200, n: 4 })) {
      if (part.type === 'text-delta' && ++parts === 10) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.pipe.stats()).toMatchObject({ running: 0, waiting: 0 });
    expect(h.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
  });

  it('the seed workload (the OVMS crash, replayed) with n = 4 under KV pressure, attention-only and hybrid: every choice its solo run, aborts and breaks included, zero blocks in use', async () => {
    for (const extraPools of [undefined, [
      { name: 'linear-state', blockSize: Infinity, bytesPerBlock: 256 },
      { name: 'checkpoints', blockSize: 32, bytesPerBlock: 256 },
    ]]) {
      const h = await make({ blocks: 90, backend: { ...(extraPools && { extraPools }) }, scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 48, prefixCaching: true } });
      const prompts = Array.from({ length: 6 }, (_, i) => `request ${i} ${'long context '.repeat(1 + (i % 3))}`.slice(0, 24));
      // Requests 1 and 4 are cut short: one by its signal, one by leaving its stream (each cancels all four choices).
      const outcomes = await Promise.allSettled(
        prompts.map(async (prompt, r) => {
          const controller = new AbortController();
          const tokens: number[][] = [[], [], [], []];
          for await (const part of h.pipe.stream(prompt, { ...SAMPLED, maxTokens: 40, seed: 100 * r, n: 4, logprobs: 1, signal: controller.signal })) {
            if (part.type !== 'token') continue;
            tokens[part.choice!]!.push(...part.tokenIds);
            if (r === 1 && tokens[0]!.length === 10) controller.abort();
            if (r === 4 && tokens[2]!.length === 10) break;
          }
          return tokens;
        }),
      );
      const stats = h.pipe.stats();
      expect(stats.preemptions).toBeGreaterThan(0);
      if (extraPools === undefined) expect(stats.forks).toBeGreaterThan(0);
      else expect(stats.forks).toBe(0); // hybrid: the choices run on their own (P2)
      for (const [r, outcome] of outcomes.entries()) {
        if (r === 1) {
          expect(outcome.status === 'rejected' && outcome.reason instanceof AbortError).toBe(true);
          continue;
        }
        expect(outcome.status).toBe('fulfilled');
        if (outcome.status !== 'fulfilled') continue;
        for (let i = 0; i < 4; i++) {
          const solo = await h.pipe.generate(prompts[r]!, { ...SAMPLED, maxTokens: 40, seed: 100 * r + i });
          // A broken-off stream got a prefix of each choice's solo output; the others all of it.
          expect(outcome.value[i]).toEqual(r === 4 ? solo.tokenIds.slice(0, outcome.value[i]!.length) : solo.tokenIds);
        }
      }
      expect(h.pipe.stats()).toMatchObject({ running: 0, waiting: 0 });
      for (const pool of h.pipe.stats().kv.pools) expect(pool.usedBlocks).toBe(0);
    }
  });

  it('refuses n that is not an integer in [1, 64], and a seed whose seed + n - 1 is not exact, by name', async () => {
    const h = await make();
    for (const n of [0, -1, 1.5, 65, Number.NaN, '2']) {
      const refused = await h.pipe.generate('x', { n: n as number, maxTokens: 1 }).then(() => `n = ${String(n)} was accepted`, (e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidOptionError);
      expect(refused).toMatchObject({ option: 'n' });
    }
    await expect(h.pipe.generate('x', { n: 3, maxTokens: 1, seed: Number.MAX_SAFE_INTEGER - 1 })).rejects.toMatchObject({ option: 'seed' });
  });
});
