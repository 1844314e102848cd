/**
 * Embeddings everywhere the user is: POST /v1/embeddings of `weft serve` (with
 * OpenAI's own client), RemotePipeline.embed over it, an isolated pipeline,
 * and the AI SDK's embed / embedMany over weft/ai-sdk. Each gives the vectors
 * the in-process pipeline gives, bit for bit where the numbers cross as
 * float32.
 */
import { join } from 'node:path';
import { embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWeft, weftEmbedding } from '../../src/ai-sdk/index.js';
import { AbortError, InvalidOptionError, Pipeline, PromptTooLongError, RemotePipeline, WeftServer } from '../../src/index.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-embed-tiny');
const ref = readReference(DIR) as unknown as { texts: string[]; token_ids: number[][]; query_embeddings: number[][] };
const asArrays = (vs: readonly Float32Array[]) => vs.map((v) => Array.from(v));

describe('embeddings beyond the in-process pipeline', () => {
  let pipe: Pipeline;
  let server: WeftServer;
  let baseURL: string;
  let expected: number[][];
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: DIR, threads: 2 });
    server = await WeftServer.start({ pipeline: pipe, modelName: 'tiny-embed', port: 0, parsers: { tool: 'none', reasoning: 'none' } });
    baseURL = `${server.url}/v1`;
    expected = asArrays((await pipe.embed(ref.texts)).embeddings);
  });
  afterAll(async () => {
    await server?.close(1000);
    await pipe?.close();
  });

  const post = (body: unknown) =>
    fetch(`${baseURL}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('POST /v1/embeddings answers in OpenAI\'s shape, with the pipeline\'s vectors', async () => {
    const response = await post({ model: 'tiny-embed', input: ref.texts });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; data: { object: string; index: number; embedding: number[] }[]; model: string; usage: { prompt_tokens: number; total_tokens: number } };
    expect(body.object).toBe('list');
    expect(body.model).toBe('tiny-embed');
    expect(body.data.map((d) => d.index)).toEqual(ref.texts.map((_, i) => i));
    expect(body.data.map((d) => d.embedding)).toEqual(expected);
    const tokens = ref.token_ids.reduce((sum, ids) => sum + ids.length, 0);
    expect(body.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
  });

  it('takes token ids, base64, dimensions and the named prompt', async () => {
    const ids = (await (await post({ model: 'tiny-embed', input: ref.token_ids })).json()) as { data: { embedding: number[] }[] };
    expect(ids.data.map((d) => d.embedding)).toEqual(expected);
    const one = (await (await post({ model: 'tiny-embed', input: ref.token_ids[0] })).json()) as { data: { embedding: number[] }[] };
    expect(one.data.map((d) => d.embedding)).toEqual([expected[0]]);
    const short = (await (await post({ model: 'tiny-embed', input: 'hello', dimensions: 8 })).json()) as { data: { embedding: number[] }[] };
    expect(short.data[0]!.embedding).toHaveLength(8);
    const query = (await (await post({ model: 'tiny-embed', input: ref.texts, prompt_name: 'query' })).json()) as { data: { embedding: number[] }[] };
    query.data.forEach((d, i) => d.embedding.forEach((v, j) => expect(Math.abs(v - ref.query_embeddings[i]![j]!)).toBeLessThan(1e-4)));
  });

  it("OpenAI's client (which asks for base64) gets the same floats", async () => {
    const client = new OpenAI({ baseURL, apiKey: 'none', maxRetries: 0 });
    const answer = await client.embeddings.create({ model: 'tiny-embed', input: ref.texts });
    expect(answer.data.map((d) => d.embedding)).toEqual(expected);
    const floats = await client.embeddings.create({ model: 'tiny-embed', input: ref.texts[0]!, encoding_format: 'float' });
    expect(floats.data[0]!.embedding).toEqual(expected[0]);
  });

  it('bad requests are 400s naming the field', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ model: 'tiny-embed', input: 7 }, 400, /input must be a string/],
      [{ model: 'tiny-embed', input: ['a', ''] }, 400, /input\[1\]: is empty/],
      [{ model: 'tiny-embed', input: 'a', encoding_format: 'int8' }, 400, /encoding_format/],
      [{ model: 'tiny-embed', input: 'a', dimensions: 1000 }, 400, /dimensions/],
      [{ model: 'tiny-embed', input: [[1, 99999]] }, 400, /not a token id/],
      [{ model: 'other', input: 'a' }, 404, /other/],
      [{ model: 'tiny-embed', input: 'weft '.repeat(600) }, 400, /has \d+ tokens/],
    ];
    for (const [body, status, message] of cases) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    }
  });

  it('RemotePipeline.embed over weft serve gives the same vectors and typed errors', async () => {
    const remote = await RemotePipeline.create({ remote: { baseURL, model: 'tiny-embed' } });
    expect(asArrays((await remote.embed(ref.texts)).embeddings)).toEqual(expected);
    expect((await remote.embed(ref.texts)).usage.promptTokens).toBe(ref.token_ids.reduce((sum, ids) => sum + ids.length, 0));
    await expect(remote.embed(['a', ''])).rejects.toThrow(InvalidOptionError);
    await expect(remote.embed('weft '.repeat(600))).rejects.toThrow(PromptTooLongError);
    const controller = new AbortController();
    controller.abort();
    await expect(remote.embed('a', { signal: controller.signal })).rejects.toThrow(AbortError);
    await remote.close();
  });

  it("the AI SDK's embed and embedMany over weft/ai-sdk", async () => {
    const provider = createWeft({ pipeline: pipe });
    const model = provider.embeddingModel();
    expect(model.maxEmbeddingsPerCall).toBe(256);
    const one = await embed({ model, value: ref.texts[0]! });
    expect(one.embedding).toEqual(expected[0]);
    const many = await embedMany({ model: provider.textEmbeddingModel('tiny', { maxEmbeddingsPerCall: 4 }), values: ref.texts });
    expect(many.embeddings).toEqual(expected); // split over two calls of at most 4
    const query = await embedMany({ model, values: ref.texts, providerOptions: { weft: { promptName: 'query' } } });
    query.embeddings.forEach((v, i) => v.forEach((x, j) => expect(Math.abs(x - ref.query_embeddings[i]![j]!)).toBeLessThan(1e-4)));
    await using owned = weftEmbedding({ model: DIR, threads: 1 });
    expect((await embed({ model: owned, value: ref.texts[1]! })).embedding).toEqual(expected[1]);
  });

  it('an isolated pipeline embeds in its child process', async () => {
    await using isolated = await Pipeline.create({ model: DIR, threads: 2, isolation: 'process' });
    expect(asArrays((await isolated.embed(ref.texts)).embeddings)).toEqual(expected);
    await expect(isolated.embed(['a', ''])).rejects.toThrow(InvalidOptionError);
  });
});

describe('weft/langchain WeftEmbeddings', () => {
  it('embedDocuments and embedQuery, with the named prompts, on a folder it opens and closes', async () => {
    const { WeftEmbeddings } = await import('../../src/langchain/index.js');
    await using embeddings = new WeftEmbeddings({ pipeline: { model: DIR, threads: 2 }, queryPromptName: 'query' });
    const documents = await embeddings.embedDocuments(ref.texts);
    await using pipe = await Pipeline.create({ model: DIR, threads: 2 });
    expect(documents).toEqual(asArrays((await pipe.embed(ref.texts)).embeddings));
    const query = await embeddings.embedQuery(ref.texts[2]!);
    query.forEach((v, j) => expect(Math.abs(v - ref.query_embeddings[2]![j]!)).toBeLessThan(1e-4));
    expect(() => new WeftEmbeddings({ pipeline: DIR, colour: 'red' } as never)).toThrow(InvalidOptionError);
  });
});
