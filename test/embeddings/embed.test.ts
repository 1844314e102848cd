/**
 * pipe.embed() on a decoder embedder laid out as Qwen3-Embedding publishes it
 * (test/fixtures/qwen3-embed-tiny, made by tools/embeddings/make_fixtures.py):
 * weft's vectors against sentence-transformers' own, alone, batched with
 * generation, chunked and preempted; the folder's pooling in both config
 * forms; and every bad input a typed error that harms no other request.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { Pipeline } from '../../src/create.js';
import { AbortError, InvalidOptionError, PromptTooLongError, UnsupportedModelError } from '../../src/errors.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-embed-tiny');
interface Reference {
  texts: string[];
  query_prompt: string;
  token_ids: number[][];
  embeddings: number[][];
  query_embeddings: number[][];
  mean_unnormalized: number[][];
  last_unnormalized: number[][];
}
const ref = readReference(DIR) as unknown as Reference;

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
};
const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) (ab += a[i]! * b[i]!), (aa += a[i]! * a[i]!), (bb += b[i]! * b[i]!);
  return ab / Math.sqrt(aa * bb);
};
function expectClose(got: readonly Float32Array[], want: readonly number[][]): void {
  expect(got).toHaveLength(want.length);
  got.forEach((v, i) => {
    expect(maxDiff(v, want[i]!), `text ${i}`).toBeLessThan(1e-4);
    expect(cosine(v, want[i]!), `text ${i}`).toBeGreaterThanOrEqual(0.99999);
  });
}

/** A copy of the fixture with its pooling files replaced. */
function variant(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-embed-'));
  cpSync(DIR, dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(content));
  return dir;
}
const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('qwen3-embed-tiny', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: DIR, threads: 2 });
  });
  afterAll(async () => pipe.close());

  it('tokenizes as sentence-transformers does (the post-processor appends <|endoftext|>)', () => {
    ref.texts.forEach((text, i) => expect(pipe.tokenizer.encode(text)).toEqual(ref.token_ids[i]));
  });

  it("equals sentence-transformers' encode(): last token, normalised, all texts in one call", async () => {
    const { embeddings, usage } = await pipe.embed(ref.texts);
    expectClose(embeddings, ref.embeddings);
    for (const v of embeddings) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(usage.promptTokens).toBe(ref.token_ids.reduce((sum, ids) => sum + ids.length, 0));
  });

  it('one text at a time gives the same vectors, and a string gives one vector', async () => {
    for (const [i, text] of ref.texts.entries()) {
      const { embeddings } = await pipe.embed(text);
      expectClose(embeddings, [ref.embeddings[i]!]);
    }
  });

  it("with the folder's named prompt 'query'", async () => {
    expectClose((await pipe.embed(ref.texts, { promptName: 'query' })).embeddings, ref.query_embeddings);
    expectClose((await pipe.embed(ref.texts, { prompt: ref.query_prompt })).embeddings, ref.query_embeddings);
  });

  it('dimensions keeps the first N values and normalises them again; normalize: false leaves the raw state', async () => {
    const { embeddings } = await pipe.embed(ref.texts, { dimensions: 16 });
    embeddings.forEach((v, i) => {
      const head = ref.last_unnormalized[i]!.slice(0, 16);
      const norm = Math.hypot(...head);
      expect(maxDiff(v, head.map((x) => x / norm))).toBeLessThan(1e-4);
    });
    expectClose((await pipe.embed(ref.texts, { normalize: false })).embeddings, ref.last_unnormalized);
  });

  it('refuses bad input with a typed error naming it', async () => {
    await expect(pipe.embed(['fine', ''])).rejects.toThrow(new InvalidOptionError('input[1]', 'is empty; an embedding needs some text'));
    await expect(pipe.embed(['fine', 3 as unknown as string])).rejects.toThrow(InvalidOptionError);
    await expect(pipe.embed(null as unknown as string)).rejects.toThrow(/input: expected a string, an array of strings or token ids/);
    await expect(pipe.embed('x', { promptName: 'passage' })).rejects.toThrow(/promptName: "passage" is not one of the model's prompts \(document, query\)/);
    await expect(pipe.embed('x', { dimensions: 65 })).rejects.toThrow(/dimensions: must be an integer in \[1, 64\]/);
    await expect(pipe.embed('x', { prompt: 'a', promptName: 'query' })).rejects.toThrow(InvalidOptionError);
    await expect(pipe.embed('x', { colour: 'red' } as never)).rejects.toThrow(/colour: is not an embed option/);
    expect(await pipe.embed([])).toEqual({ embeddings: [], usage: { promptTokens: 0 } });
  });

  it('a text longer than the context is a PromptTooLongError naming its index, or is cut with truncate', async () => {
    const long = 'weft runs continuous batching in TypeScript. '.repeat(80); // > 512 tokens
    await expect(pipe.embed(['short', long])).rejects.toThrow(PromptTooLongError);
    await expect(pipe.embed(['short', long])).rejects.toThrow(/input\[1\] has \d+ tokens; the model's context holds 511 \(set truncate: true/);
    const { embeddings, usage } = await pipe.embed(['short', long], { truncate: true });
    expect(embeddings).toHaveLength(2);
    expect(usage.promptTokens).toBe(pipe.tokenizer.encode('short').length + 511);
  });

  it('does not generate: a base model has no LM head', async () => {
    await expect(pipe.generate('hello')).rejects.toThrow(UnsupportedModelError);
    expect(() => pipe.stream('hello')).toThrow(/base model without an LM head/);
  });

  it('an aborted call rejects with AbortError and leaves no blocks behind', async () => {
    const controller = new AbortController();
    const run = pipe.embed(Array(300).fill(ref.texts[3]!), { signal: controller.signal }); // several steps' worth
    pipe.once('step', () => controller.abort());
    await expect(run).rejects.toThrow(AbortError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const pool of pipe.stats().kv.pools) expect(pool.usedBlocks).toBe(0);
    expectClose((await pipe.embed(ref.texts)).embeddings, ref.embeddings);
  });
});

describe('the same weights, other pooling settings of the folder', () => {
  const withoutNormalize = (pooling: unknown) => ({
    'modules.json': [
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.base.modules.transformer.Transformer' },
      { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    ],
    '1_Pooling/config.json': pooling,
  });
  it.each([
    ['sentence-transformers 6 (pooling_mode: "mean")', { embedding_dimension: 64, pooling_mode: 'mean', include_prompt: true }],
    ['earlier versions (pooling_mode_mean_tokens: true)', { word_embedding_dimension: 64, pooling_mode_cls_token: false, pooling_mode_mean_tokens: true, pooling_mode_max_tokens: false, pooling_mode_mean_sqrt_len_tokens: false }],
  ])('mean pooling, not normalised, as %s writes it', async (_, pooling) => {
    const dir = variant(withoutNormalize(pooling));
    made.push(dir);
    await using pipe = await Pipeline.create({ model: dir, threads: 2 });
    expectClose((await pipe.embed(ref.texts)).embeddings, ref.mean_unnormalized);
  });

  it('refuses pooling weft does not run, at embed(), naming the file (the pipeline still opens)', async () => {
    const dir = variant(withoutNormalize({ pooling_mode: 'max' }));
    made.push(dir);
    await using pipe = await Pipeline.create({ model: dir, threads: 2 });
    await expect(pipe.embed('x')).rejects.toThrow(UnsupportedModelError);
    await expect(pipe.embed('x')).rejects.toThrow(/1_Pooling\/config.json: pooling mode "max" is not supported/);
  });

  it('a bad max_seq_length is a ModelLoadError at embed(); a tokenizer limit meaning "none" leaves the context', async () => {
    const bad = variant({ 'sentence_bert_config.json': { max_seq_length: -1 } });
    const none = variant({ 'sentence_bert_config.json': {}, 'tokenizer_config.json': { ...JSON.parse(readFileSync(join(DIR, 'tokenizer_config.json'), 'utf8')), model_max_length: 1e30 } });
    made.push(bad, none);
    await using badPipe = await Pipeline.create({ model: bad, threads: 2 });
    await expect(badPipe.embed('x')).rejects.toThrow(/sentence_bert_config.json: max_seq_length must be a positive integer, got -1/);
    await using nonePipe = await Pipeline.create({ model: none, threads: 2 });
    await expect(nonePipe.embed('hello world '.repeat(300))).rejects.toThrow(/the model's context holds 511/);
  });

  it('the pipeline option embedding overrides the folder', async () => {
    await using pipe = await Pipeline.create({ model: DIR, threads: 2, embedding: { pooling: 'mean', normalize: false } });
    expectClose((await pipe.embed(ref.texts)).embeddings, ref.mean_unnormalized);
    await expect(Pipeline.create({ model: DIR, embedding: { pooling: 'max' as never } })).rejects.toThrow(/embedding.pooling: expected one of last, mean, cls/);
  });
});

describe('embedding beside generation, under cache pressure', () => {
  it('mean and last pooling give the same vectors while other requests generate, chunked and preempted', async () => {
    // A custom-backend pipeline over the same weights generates (its tied head's tokens mean nothing).
    const backend = await CpuBackend.load(DIR, { threads: 2 });
    await using pipe = await Pipeline.create({
      backend,
      tokenizer: (await Pipeline.create({ model: DIR, threads: 1 }).then(async (p) => { const t = p.tokenizer; await p.close(); return t; })),
      kvCache: { size: 24 * 3 * 2 * 16 * 2 * 4 * 16, blockSize: 16, precision: 'f32' }, // 24 blocks
      scheduler: { maxNumSeqs: 8, maxNumBatchedTokens: 16 },
      embedding: { pooling: 'mean', normalize: false },
    });
    const generations = Array.from({ length: 6 }, (_, i) => pipe.generate(ref.texts[i % ref.texts.length]!, { maxTokens: 40, ignoreEos: true }));
    const embedded = await Promise.all([pipe.embed(ref.texts), pipe.embed([...ref.texts].reverse())]);
    await Promise.all(generations);
    expectClose(embedded[0]!.embeddings, ref.mean_unnormalized);
    expectClose(embedded[1]!.embeddings, [...ref.mean_unnormalized].reverse());
    expect(pipe.stats().preemptions).toBeGreaterThan(0);
    for (const pool of pipe.stats().kv.pools) expect(pool.usedBlocks).toBe(0);
  });
});
