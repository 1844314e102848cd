// Bad input a caller can give, each found by trying: a typed error for the request that
// carries it (or the pipeline that would be made), and nothing else harmed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, StepBatch, StepResult } from '../../src/backends/backend.js';
import { BackendError, InvalidOptionError, Pipeline, TokenizerError, WeftError } from '../../src/index.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { harness, type Harness } from '../support/harness.js';
import { TestBackend } from '../support/test-backend.js';

async function rejection(run: () => Promise<unknown>): Promise<WeftError> {
  const error = await run().then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(WeftError);
  return error as WeftError;
}

describe('prompts and options', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ backend: { delayMs: 0 } });
  });
  afterAll(async () => {
    await h.pipe.close();
  });

  it('sparse token arrays are refused, naming the hole (holes used to become token 0)', async () => {
    for (const prompt of [new Array(5), [1, , 3]]) {
      const error = await rejection(() => h.pipe.generate(prompt as number[], { maxTokens: 2 }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error.message).toMatch(/prompt\[\d\].*a hole/);
    }
  });

  it('null options are InvalidOptionError for generate, chat and stream', async () => {
    const bad = null as unknown as object;
    expect(await rejection(() => h.pipe.generate('hi', bad))).toBeInstanceOf(InvalidOptionError);
    expect(await rejection(() => h.pipe.chat([{ role: 'user', content: 'hi' }], bad))).toBeInstanceOf(InvalidOptionError);
    expect(() => h.pipe.stream('hi', bad)).toThrow(InvalidOptionError);
  });

  it('a kvCache.size beyond physical memory is refused before anything is allocated (2TB used to abort V8)', async () => {
    for (const size of ['2TB', '200TB', 1e15]) {
      const error = await rejection(() => Pipeline.create({ backend: new TestBackend(), tokenizer: new ByteTokenizer(), kvCache: { size } }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error.message).toContain("more than this machine's memory");
    }
  });

  it('a size that would make more blocks than the manager keeps is refused', async () => {
    // The test backend's blocks are tiny: 2 GB at one token a block makes ~8M of them.
    const error = await rejection(() => Pipeline.create({ backend: new TestBackend(), tokenizer: new ByteTokenizer(), kvCache: { size: '2GB', blockSize: 1 } }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error.message).toMatch(/blocks in the attention pool/);
  });

  it("model: '' says the path is empty, not that a tokenizer is missing", async () => {
    const error = await rejection(() => Pipeline.create({ model: '' }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error.message).toContain('(got "")');
  });

  it('extreme but in-range sampling options still pick defined tokens', async () => {
    const out = await h.pipe.generate('hello there', { maxTokens: 8, temperature: 1, repetitionPenalty: 1e-39, minP: 0.5, seed: 3 });
    expect(out.tokenIds).toHaveLength(8);
    for (const id of out.tokenIds) expect(Number.isInteger(id)).toBe(true);
  });
});

describe('a tokenizer that does not belong to the model', () => {
  it('is refused at load when its ids exceed the vocabulary', async () => {
    const backend = new TestBackend();
    const tokenizer = Object.assign(new ByteTokenizer(), { vocabSize: backend.shape.vocabSize + 10 });
    expect(await rejection(() => Pipeline.create({ backend, tokenizer }))).toBeInstanceOf(TokenizerError);
  });

  it('an out-of-range id from encode fails that request alone, at submission', async () => {
    const h = await harness({ backend: { delayMs: 1 } });
    const encode = h.tokenizer.encode.bind(h.tokenizer);
    h.tokenizer.encode = (text, options) => (text.includes('BAD') ? [...encode(text, options), 100000] : encode(text, options));
    try {
      const innocent = h.pipe.generate('innocent', { maxTokens: 20, ignoreEos: true });
      const error = await rejection(() => h.pipe.generate('BAD prompt', { maxTokens: 5 }));
      expect(error).toBeInstanceOf(TokenizerError);
      expect((await innocent).tokenIds).toEqual(h.expected('innocent', 20, true));
    } finally {
      await h.pipe.close();
    }
  });
});

/** The test backend, with NaN logits for every sequence whose step holds token `poison`. */
class PoisonedBackend implements Backend {
  readonly inner = new TestBackend({ delayMs: 0 });
  readonly shape = this.inner.shape;
  constructor(private readonly poison: number) {}
  allocateCache(config: Parameters<Backend['allocateCache']>[0]): void | Promise<void> {
    return this.inner.allocateCache(config);
  }
  async execute(batch: StepBatch): Promise<StepResult> {
    const { logits } = await this.inner.execute(batch);
    const vocab = this.shape.vocabSize;
    for (let row = 0; row < batch.logitsIndices.length; row++) {
      const tokenAt = batch.logitsIndices[row]!;
      let seq = 0;
      while (batch.subsequenceBegins[seq + 1]! <= tokenAt) seq++;
      const mine = batch.inputIds.subarray(batch.subsequenceBegins[seq]!, batch.subsequenceBegins[seq + 1]!);
      if (mine.includes(this.poison)) logits.fill(Number.NaN, row * vocab, (row + 1) * vocab);
    }
    return { logits };
  }
  dispose(): void {}
}

describe('non-finite logits', () => {
  it('fail the request that meets them with a typed error, greedy or sampled; the rest of the batch is untouched', async () => {
    const tokenizer = new ByteTokenizer();
    const poison = tokenizer.encode('~', { addSpecialTokens: false })[0]!;
    const backend = new PoisonedBackend(poison);
    const clean = await harness({ backend: { delayMs: 0 } });
    const pipe = await Pipeline.create({ backend, tokenizer, kvCache: { size: 1 << 20, blockSize: 4 } });
    try {
      const innocent = pipe.generate('plain text', { maxTokens: 30, ignoreEos: true });
      for (const options of [{ temperature: 0 }, { temperature: 1, topP: 0.9 }, { temperature: 0, logprobs: 2 }]) {
        const error = await rejection(() => pipe.generate('poisoned ~', { maxTokens: 5, ...options }));
        expect(error).toBeInstanceOf(BackendError);
        expect(error.message).toContain('non-finite logits');
      }
      expect((await innocent).tokenIds).toEqual(clean.expected('plain text', 30, true));
      const stats = pipe.stats();
      expect(stats.kv.pools[0]!.usedBlocks).toBe(0);
    } finally {
      await pipe.close();
      await clean.pipe.close();
    }
  });
});

describe('a chat template that renders nothing', () => {
  it('is a ChatTemplateError, not PROMPT_TOO_LONG', async () => {
    const { ChatTemplate } = await import('../../src/text/chat-template.js');
    const chatTemplate = new ChatTemplate(new Map([['default', '{% if false %}x{% endif %}']]), {});
    await using pipe = await Pipeline.create({ backend: new TestBackend(), tokenizer: new ByteTokenizer(), chatTemplate, kvCache: { size: 1 << 20, blockSize: 4 } });
    const error = await rejection(() => pipe.chat([{ role: 'user', content: 'hi' }], { maxTokens: 2 }));
    expect(error.code).toBe('CHAT_TEMPLATE_ERROR');
  });
});
