import { afterEach, describe, expect, it } from 'vitest';
import {
  AbortError,
  BackendError,
  InvalidOptionError,
  PipelineClosedError,
  PromptTooLongError,
} from '../../src/errors.js';
import type { StepBatch } from '../../src/backends/backend.js';
import type { StreamPart } from '../../src/pipeline/stream-parts.js';
import { ChatTemplate } from '../../src/text/chat-template.js';
import { Pipeline } from '../../src/create.js';
import { ByteTokenizer, EOS } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';
import { harness, prompts, type Harness } from '../support/harness.js';

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

function usedBlocks(h: Harness): number {
  return h.pipe.stats().kv.pools.reduce((sum, pool) => sum + pool.usedBlocks, 0);
}

describe('Pipeline.generate', () => {
  it('produces the backend rule greedy output, its text and usage', async () => {
    const h = await make({ backend: { eosPercent: 5 } });
    const result = await h.pipe.generate('Once upon a time', { maxTokens: 40, temperature: 0 });
    const expected = h.expected('Once upon a time', 40);
    expect(result.tokenIds).toEqual(expected);
    expect(result.text).toBe(h.tokenizer.decode(expected));
    expect(result.finishReason).toBe(expected.at(-1) === EOS ? 'stop' : 'length');
    expect(result.usage).toMatchObject({ promptTokens: 17, completionTokens: expected.length });
    expect(usedBlocks(h)).toBe(0);
  });

  it('generates exactly maxTokens with ignoreEos', async () => {
    const h = await make({ backend: { eosPercent: 60, minEosContext: 1 } });
    const result = await h.pipe.generate('abc', { maxTokens: 30, ignoreEos: true, temperature: 0 });
    expect(result.tokenIds).toEqual(h.expected('abc', 30, true));
    expect(result.tokenIds).toContain(EOS);
    expect(result.finishReason).toBe('length');
  });

  it('stops at a stop string, excludes it, and never emits a partial match', async () => {
    const h = await make();
    const full = h.tokenizer.decode(h.expected('stop test', 60, true));
    const stop = full.slice(20, 23);
    const first = full.indexOf(stop);
    const parts: string[] = [];
    for await (const part of h.pipe.stream('stop test', { maxTokens: 60, ignoreEos: true, stop: [stop, 'never-appears'], temperature: 0 })) {
      if (part.type === 'text-delta') parts.push(part.text);
      if (part.type === 'finish') expect(part.finishReason).toBe('stop');
    }
    expect(parts.join('')).toBe(full.slice(0, first));
  });

  it('never emits half a UTF-8 character', async () => {
    const h = await make({ backend: { alphabet: 'é漢字🙂a ' } });
    const deltas: string[] = [];
    let ids: number[] = [];
    for await (const part of h.pipe.stream('utf8', { maxTokens: 80, ignoreEos: true, temperature: 0 })) {
      if (part.type === 'text-delta') deltas.push(part.text);
    }
    ids = h.expected('utf8', 80, true);
    for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
    // The last character may be incomplete at maxTokens: everything before it matches.
    const text = deltas.join('');
    expect(h.tokenizer.decode(ids).startsWith(text)).toBe(true);
    expect(text.length).toBeGreaterThan(10);
  });

  it('accepts token ids as the prompt', async () => {
    const h = await make();
    const ids = h.tokenizer.encode('ids prompt');
    const result = await h.pipe.generate(ids, { maxTokens: 10, ignoreEos: true, temperature: 0 });
    expect(result.tokenIds).toEqual(h.expected('ids prompt', 10, true));
  });
});

describe('batching, preemption and prefix caching', () => {
  const cases = [
    { name: 'a huge cache', blocks: 10_000, prefixCaching: false, shared: '' },
    { name: 'a cache that fits about two requests', blocks: 40, prefixCaching: false, shared: '' },
    { name: 'prefix caching and a shared prompt prefix', blocks: 10_000, prefixCaching: true, shared: 'You are a helpful storyteller. '.repeat(3) },
    { name: 'prefix caching, a shared prefix and preemption', blocks: 60, prefixCaching: true, shared: 'You are a helpful storyteller. '.repeat(3) },
  ];
  for (const c of cases) {
    it(`gives every request its solo greedy output with ${c.name}`, async () => {
      const h = await make({ blocks: c.blocks, scheduler: { prefixCaching: c.prefixCaching, maxNumBatchedTokens: 64 } });
      h.backend.recordBatches = true;
      const texts = prompts(8, c.shared);
      const results = await Promise.all(texts.map((p) => h.pipe.generate(p, { maxTokens: 50, ignoreEos: true, temperature: 0 })));
      results.forEach((result, i) => expect(result.tokenIds).toEqual(h.expected(texts[i]!, 50, true)));
      expect(usedBlocks(h)).toBe(0);
      const stats = h.pipe.stats();
      if (c.blocks < 100) expect(stats.preemptions).toBeGreaterThan(0);
      if (c.prefixCaching) expect(results.some((r) => r.usage.cachedPromptTokens > 0)).toBe(true);
      for (const r of results) expect(r.usage.cachedPromptTokens).toBeLessThanOrEqual(r.usage.promptTokens);
      // Budget and batch limits held in every step.
      for (const batch of h.backend.steps) expect(batch.inputIds.length).toBeLessThanOrEqual(64);
    });
  }

  it('respects maxNumSeqs and the token budget in every step', async () => {
    const h = await make({ scheduler: { maxNumSeqs: 3, maxNumBatchedTokens: 10 } });
    h.backend.recordBatches = true;
    const texts = prompts(7);
    await Promise.all(texts.map((p) => h.pipe.generate(p, { maxTokens: 12, ignoreEos: true })));
    expect(h.backend.steps.length).toBeGreaterThan(10);
    for (const batch of h.backend.steps) {
      expect(batch.pastLens.length).toBeLessThanOrEqual(3);
      expect(batch.inputIds.length).toBeLessThanOrEqual(10);
      checkBatchShape(batch);
    }
  });

  it('same seed gives the same sampled output alone and batched', async () => {
    const h = await make();
    const options = { maxTokens: 30, temperature: 1.3, topP: 0.95, seed: 1234, ignoreEos: true };
    const alone = await h.pipe.generate('seeded', options);
    const batched = await Promise.all([
      h.pipe.generate('noise one', { ...options, seed: 1 }),
      h.pipe.generate('seeded', options),
      h.pipe.generate('noise two', { ...options, seed: 2 }),
    ]);
    expect(batched[1]!.tokenIds).toEqual(alone.tokenIds);
    // Sampling really happened: the output differs from greedy.
    expect(alone.tokenIds).not.toEqual(h.expected('seeded', 30, true));
  });

  it('runs higher priority requests first under the priority policy', async () => {
    const h = await make({ scheduler: { policy: 'priority', maxNumSeqs: 1 } });
    const order: string[] = [];
    const low = h.pipe.generate('low', { maxTokens: 5, ignoreEos: true, priority: 0 }).then(() => order.push('low'));
    const other = h.pipe.generate('other', { maxTokens: 5, ignoreEos: true, priority: 1 }).then(() => order.push('other'));
    const high = h.pipe.generate('high', { maxTokens: 5, ignoreEos: true, priority: 9 }).then(() => order.push('high'));
    await Promise.all([low, other, high]);
    expect(order).toEqual(['high', 'other', 'low']);
  });
});

describe('aborts and failures touch one request only', () => {
  it('aborting one request never changes another output', async () => {
    const h = await make({ blocks: 50 });
    const texts = prompts(6);
    const controller = new AbortController();
    const consume = async (): Promise<number> => {
      let tokens = 0;
      for await (const part of h.pipe.stream(texts[2]!, { maxTokens: 40, ignoreEos: true, signal: controller.signal })) {
        if (part.type === 'text-delta' && ++tokens === 5) controller.abort(new Error('user gave up'));
      }
      return tokens;
    };
    const runs = texts.map((p, i) => (i === 2 ? consume() : h.pipe.generate(p, { maxTokens: 40, ignoreEos: true, temperature: 0 })));
    const settled = await Promise.allSettled(runs);
    const aborted = settled[2]!;
    expect(aborted.status).toBe('rejected');
    if (aborted.status === 'rejected') {
      expect(aborted.reason).toBeInstanceOf(AbortError);
      expect(aborted.reason.code).toBe('ABORTED');
      expect(aborted.reason.cause).toEqual(new Error('user gave up'));
    }
    settled.forEach((result, i) => {
      if (i === 2) return;
      expect(result.status).toBe('fulfilled');
      if (result.status === 'fulfilled') expect((result.value as { tokenIds: number[] }).tokenIds).toEqual(h.expected(texts[i]!, 40, true));
    });
    expect(usedBlocks(h)).toBe(0);
  });

  it('rejects at once for a signal that is already aborted', async () => {
    const h = await make();
    await expect(h.pipe.generate('x', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
  });

  it('breaking out of a stream cancels that request and frees its blocks', async () => {
    const h = await make();
    let seen = 0;
    for await (const part of h.pipe.stream('break me', { maxTokens: 1000, ignoreEos: true })) {
      if (part.type === 'text-delta') seen++;
      if (seen === 5) break;
    }
    await waitFor(() => h.pipe.stats().running === 0 && h.pipe.stats().waiting === 0);
    expect(usedBlocks(h)).toBe(0);
    expect(h.pipe.stats().generatedTokens).toBeLessThan(1000);
  });

  it('fails a prompt that cannot fit the whole cache with a typed error, and keeps serving', async () => {
    const h = await make({ blocks: 8, blockSize: 4 }); // 32 tokens in all
    await expect(h.pipe.generate('x'.repeat(40))).rejects.toBeInstanceOf(PromptTooLongError);
    const ok = await h.pipe.generate('short', { maxTokens: 5, ignoreEos: true, temperature: 0 });
    expect(ok.tokenIds).toEqual(h.expected('short', 5, true));
  });

  it('ends a request that outgrows the whole cache with "length" instead of hanging', async () => {
    const h = await make({ blocks: 8, blockSize: 4 });
    const result = await h.pipe.generate('grow', { maxTokens: 500, ignoreEos: true, temperature: 0 });
    expect(result.finishReason).toBe('length');
    expect(result.tokenIds.length).toBeGreaterThan(20);
    expect(result.tokenIds).toEqual(h.expected('grow', result.tokenIds.length, true));
  });

  it('a backend failure fails the requests of that step only; the pipeline keeps serving', async () => {
    const poison = 'Q'.charCodeAt(0);
    const h = await make({ backend: { failOnToken: poison } });
    await expect(h.pipe.generate('Q is poisoned', { maxTokens: 5 })).rejects.toBeInstanceOf(BackendError);
    const ok = await h.pipe.generate('fine', { maxTokens: 5, ignoreEos: true, temperature: 0 });
    expect(ok.tokenIds).toEqual(h.expected('fine', 5, true));
    expect(usedBlocks(h)).toBe(0);
  });

  it('close() ends pending requests with PipelineClosedError and refuses new ones', async () => {
    const h = await make({ backend: { delayMs: 2 } });
    const pending = h.pipe.generate('long', { maxTokens: 10_000, ignoreEos: true }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await h.pipe.close();
    expect(await pending).toBeInstanceOf(PipelineClosedError);
    await expect(h.pipe.generate('after')).rejects.toBeInstanceOf(PipelineClosedError);
    expect(h.backend.disposed).toBe(true);
    await h.pipe.close(); // idempotent
  });
});

describe('options and events', () => {
  it('rejects bad pipeline options with InvalidOptionError naming the option', async () => {
    const bad: [object, string][] = [
      [{ kvCache: { size: 'lots' } }, 'kvCache.size'],
      [{ kvCache: { precision: 'f8' } }, 'kvCache.precision'],
      [{ kvCache: { blockSize: 0 } }, 'kvCache.blockSize'],
      [{ scheduler: { maxNumSeqs: 1.5 } }, 'scheduler.maxNumSeqs'],
      [{ scheduler: { policy: 'random' } }, 'scheduler.policy'],
      [{ scheduler: { maxNumSeqs: 8, maxNumBatchedTokens: 4 } }, 'scheduler.maxNumBatchedTokens'],
      [{ device: 'tpu' }, 'device'],
      [{ device: 1 }, 'device'],
      [{ scheduler: null }, 'scheduler'],
      [{ kvCache: { size: 0.5 } }, 'kvCache.size'],
      [{ logger: console }, 'logger'],
      [{ parsers: { tool: 'nope' } }, 'parsers.tool'],
      [{ parsers: { reasoning: 'nope' } }, 'parsers.reasoning'],
    ];
    for (const [options, name] of bad) {
      const error = await harness(options as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe(name);
    }
    // Not through the harness, which fills kvCache in itself.
    const direct = await Pipeline.create({ backend: new TestBackend(), tokenizer: new ByteTokenizer(), kvCache: '1MB' as never }).catch((e: unknown) => e);
    expect((direct as InvalidOptionError).option).toBe('kvCache');
  });

  it('rejects bad request options with InvalidOptionError', async () => {
    const h = await make();
    const bad: [object, string][] = [
      [{ maxTokens: 0 }, 'maxTokens'],
      [{ temperature: -1 }, 'temperature'],
      [{ topP: 0 }, 'topP'],
      [{ topK: 2.5 }, 'topK'],
      [{ stop: [''] }, 'stop'],
      [{ logprobs: 99 }, 'logprobs'],
      [{ signal: 'no' }, 'signal'],
    ];
    for (const [options, name] of bad) {
      const error = await h.pipe.generate('x', options as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe(name);
    }
    expect(() => h.pipe.stream([1, 2, 99999])).toThrow(InvalidOptionError);
    expect(() => h.pipe.stream([])).toThrow(InvalidOptionError);
    expect(() => h.pipe.stream('x', { parsers: { tool: 'nope' } })).toThrow(InvalidOptionError);
  });

  it('reports log probabilities that agree with greedy choice', async () => {
    const h = await make();
    const result = await h.pipe.generate('lp', { maxTokens: 4, ignoreEos: true, temperature: 0, logprobs: 3 });
    expect(result.logprobs).toHaveLength(4);
    result.logprobs!.forEach((entry, i) => {
      expect(entry.token).toBe(result.tokenIds[i]);
      expect(entry.topLogprobs[0]!.token).toBe(entry.token);
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.topLogprobs).toHaveLength(3);
    });
  });

  it('emits step and request lifecycle events, and stats', async () => {
    const h = await make();
    const events: string[] = [];
    h.pipe.on('step', () => events.push('step'));
    h.pipe.on('request-start', () => events.push('start'));
    h.pipe.on('request-finish', ({ finishReason }) => events.push(`finish:${finishReason}`));
    await h.pipe.generate('events', { maxTokens: 3, ignoreEos: true });
    expect(events[0]).toBe('start');
    expect(events.filter((e) => e === 'step')).toHaveLength(3);
    expect(events.at(-1)).toBe('finish:length');
    const stats = h.pipe.stats();
    expect(stats.steps).toBe(3);
    expect(stats.requests).toEqual({ started: 1, finished: 1 });
    expect(stats.kv.pools[0]).toMatchObject({ name: 'attention', usedBlocks: 0, totalBlocks: 1000 });
  });

  it('chat() renders the template and streams text parts', async () => {
    const template = new ChatTemplate(
      "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}",
    );
    const h = await make({ chatTemplate: template });
    const messages = [{ role: 'user' as const, content: 'hi there' }];
    const result = await h.pipe.chat(messages, { maxTokens: 8, ignoreEos: true, temperature: 0 });
    const rendered = '<user>hi there\n<assistant>';
    // chat() encodes without adding BOS (the template owns special tokens).
    const context = h.tokenizer.encode(rendered, { addSpecialTokens: false });
    const direct: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = h.backend.nextToken(context);
      direct.push(next);
      context.push(next);
    }
    expect(result.content).toBe(h.tokenizer.decode(direct));
    expect(result.reasoning).toBeNull();
    expect(result.toolCalls).toEqual([]);
    const parts: StreamPart[] = [];
    for await (const part of h.pipe.stream(messages, { maxTokens: 8, ignoreEos: true, temperature: 0 })) parts.push(part);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'length' });
    expect(parts.filter((p) => p.type === 'text-delta').map((p) => (p as { text: string }).text).join('')).toBe(result.content);
  });
});

function checkBatchShape(batch: StepBatch): void {
  const seqs = batch.pastLens.length;
  expect(batch.subsequenceBegins.length).toBe(seqs + 1);
  expect(batch.blockIndicesBegins.length).toBe(seqs + 1);
  expect(batch.subsequenceBegins[seqs]).toBe(batch.inputIds.length);
  expect(batch.blockIndicesBegins[seqs]).toBe(batch.blockIndices.length);
  for (let i = 0; i < seqs; i++) {
    const tokens = batch.subsequenceBegins[i + 1]! - batch.subsequenceBegins[i]!;
    expect(tokens).toBeGreaterThan(0);
    expect(batch.maxContextLen).toBeGreaterThanOrEqual(batch.pastLens[i]! + tokens);
  }
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe('user code that throws harms no request', () => {
  it('a throwing logger and throwing event listeners change no output and no error', async () => {
    const poison = 'Q'.charCodeAt(0);
    const h = await make({
      backend: { failOnToken: poison },
      logger: () => {
        throw new Error('logger bug');
      },
    });
    for (const event of ['step', 'request-start', 'request-finish', 'request-preempted', 'log'] as const) {
      h.pipe.on(event, () => {
        throw new Error(`${event} listener bug`);
      });
    }
    const texts = ['one', 'two', 'three'];
    const results = await Promise.all(texts.map((t) => h.pipe.generate(t, { maxTokens: 6, ignoreEos: true, temperature: 0 })));
    results.forEach((r, i) => expect(r.tokenIds).toEqual(h.expected(texts[i]!, 6, true)));
    // A failing step logs (the logger throws): still a typed error for that request only.
    await expect(h.pipe.generate('Q', { maxTokens: 3 })).rejects.toBeInstanceOf(BackendError);
    expect(h.pipe.stats().running).toBe(0);
  });
});

describe('close() and streams', () => {
  it('concurrent close() calls all wait for the backend to be disposed', async () => {
    const h = await make();
    const seen: boolean[] = [];
    await Promise.all([h.pipe.close().then(() => seen.push(h.backend.disposed)), h.pipe.close().then(() => seen.push(h.backend.disposed))]);
    expect(seen).toEqual([true, true]);
  });

  it('Symbol.asyncDispose closes the pipeline (await using)', async () => {
    const h = await make();
    const pending = h.pipe.generate('disposed', { maxTokens: 10_000, ignoreEos: true }).catch((e: unknown) => e);
    await h.pipe[Symbol.asyncDispose]();
    expect(await pending).toBeInstanceOf(PipelineClosedError);
    expect(h.backend.disposed).toBe(true);
  });

  it('a stream is iterated once; a second iteration is a typed error', async () => {
    const h = await make();
    const stream = h.pipe.stream('once', { maxTokens: 3, ignoreEos: true });
    const parts: string[] = [];
    for await (const part of stream) parts.push(part.type);
    expect(parts.at(-1)).toBe('finish');
    expect(() => stream[Symbol.asyncIterator]()).toThrow(InvalidOptionError);
  });
});

describe('stream() validation', () => {
  it('throws bad options synchronously, before any iteration', async () => {
    const h = await harness();
    expect(() => h.pipe.stream('x', { temperature: -2 })).toThrow(InvalidOptionError);
    await h.pipe.close();
  });
});
