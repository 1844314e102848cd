/**
 * Reranking everywhere the user is: POST /v1/rerank (and /rerank) of `weft
 * serve` in vLLM's and llama.cpp's shape, RemotePipeline.rerank over it, an
 * isolated pipeline, the AI SDK's rerank() over weft/ai-sdk, and LangChain's
 * document compressor. Each gives the scores the in-process pipeline gives.
 */
import { join } from 'node:path';
import { rerank } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWeft, weftReranking } from '../../src/ai-sdk/index.js';
import { AbortError, InvalidOptionError, Pipeline, PromptTooLongError, RemotePipeline, UnsupportedModelError, WeftServer } from '../../src/index.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-rerank-tiny');
const ref = readReference(DIR) as unknown as { query: string; documents: string[]; default_instruction: { scores: number[]; token_ids: number[][] }; custom_instruction: { instruction: string; scores: number[] } };
const LONG = 'weft runs continuous batching in TypeScript. '.repeat(80);

describe('reranking beyond the in-process pipeline', () => {
  let pipe: Pipeline;
  let server: WeftServer;
  let baseURL: string;
  let scores: number[];
  let order: number[];
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: DIR, threads: 2 });
    server = await WeftServer.start({ pipeline: pipe, modelName: 'tiny-rerank', port: 0, parsers: { tool: 'none', reasoning: 'none' } });
    baseURL = `${server.url}/v1`;
    const result = await pipe.rerank(ref.query, ref.documents);
    scores = result.scores;
    order = result.ranking.map((r) => r.index);
    scores.forEach((s, i) => expect(Math.abs(s - ref.default_instruction.scores[i]!)).toBeLessThan(1e-4));
  });
  afterAll(async () => {
    await server?.close(1000);
    await pipe?.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  type Answer = { id: string; model: string; results: { index: number; relevance_score: number; document?: { text: string } }[]; usage: { prompt_tokens: number; total_tokens: number } };

  it("POST /v1/rerank answers in vLLM's shape, best first, with the pipeline's scores", async () => {
    const response = await post('/v1/rerank', { model: 'tiny-rerank', query: ref.query, documents: ref.documents });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Answer;
    expect(body.model).toBe('tiny-rerank');
    expect(body.id).toMatch(/^rerank-/);
    expect(body.results.map((r) => r.index)).toEqual(order);
    body.results.forEach((r) => expect(r.relevance_score).toBe(scores[r.index]));
    expect(body.results.every((r) => r.document === undefined)).toBe(true);
    const tokens = ref.default_instruction.token_ids.reduce((sum, ids) => sum + ids.length, 0);
    expect(body.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
  });

  it('/rerank is the same route; top_n, return_documents, { text } documents and instruction', async () => {
    const body = (await (await post('/rerank', {
      model: 'tiny-rerank', query: ref.query, documents: ref.documents.map((text) => ({ text })), top_n: 2, return_documents: true,
    })).json()) as Answer;
    expect(body.results.map((r) => r.index)).toEqual(order.slice(0, 2));
    expect(body.results.map((r) => r.document?.text)).toEqual(order.slice(0, 2).map((i) => ref.documents[i]));
    const custom = (await (await post('/v1/rerank', { query: ref.query, documents: ref.documents, instruction: ref.custom_instruction.instruction })).json()) as Answer;
    custom.results.forEach((r) => expect(Math.abs(r.relevance_score - ref.custom_instruction.scores[r.index]!)).toBeLessThan(1e-4));
  });

  it('bad requests are 400s naming the field', async () => {
    const cases: [unknown, number, RegExp, string | null][] = [
      [{ query: ref.query, documents: 'one' }, 400, /documents must be an array/, 'documents'],
      [{ query: 3, documents: ['a'] }, 400, /query must be a string/, 'query'],
      [{ query: '', documents: ['a'] }, 400, /query: is empty/, 'query'],
      [{ query: ref.query, documents: [] }, 400, /documents: is empty/, 'documents'],
      [{ query: ref.query, documents: ['a', 4] }, 400, /documents\[1\] must be a string or \{ "text": string \}/, 'documents[1]'],
      [{ query: ref.query, documents: ['a'], top_n: 0 }, 400, /top_n must be a positive integer/, 'top_n'],
      [{ query: ref.query, documents: ['a', LONG] }, 400, /documents\[1\]: the pair makes \d+ tokens/, 'documents'],
      [{ model: 'other', query: ref.query, documents: ['a'] }, 404, /other/, 'model'],
    ];
    for (const [body, status, message, param] of cases) {
      const response = await post('/v1/rerank', body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      const { error } = (await response.json()) as { error: { message: string; param: string | null } };
      expect(error.message).toMatch(message);
      expect(error.param).toBe(param);
    }
    expect((await post('/v1/rerank', { query: ref.query, documents: ['a', LONG], truncate: true })).status).toBe(200);
  });

  it('RemotePipeline.rerank over weft serve gives the same scores and typed errors', async () => {
    const remote = await RemotePipeline.create({ remote: { baseURL, model: 'tiny-rerank' } });
    const result = await remote.rerank(ref.query, ref.documents, { topN: 3 });
    expect(result.scores).toEqual(scores);
    expect(result.ranking.map((r) => r.index)).toEqual(order.slice(0, 3));
    expect(result.usage.promptTokens).toBe(ref.default_instruction.token_ids.reduce((sum, ids) => sum + ids.length, 0));
    await expect(remote.rerank(ref.query, ['a', ''])).rejects.toThrow(InvalidOptionError);
    await expect(remote.rerank(ref.query, ['a', LONG])).rejects.toThrow(PromptTooLongError);
    expect((await remote.rerank(ref.query, ['a', LONG], { truncate: true })).scores).toHaveLength(2);
    const controller = new AbortController();
    controller.abort();
    await expect(remote.rerank(ref.query, ['a'], { signal: controller.signal })).rejects.toThrow(AbortError);
    await remote.close();
  });

  it("the AI SDK's rerank() over weft/ai-sdk", async () => {
    const model = createWeft({ pipeline: pipe }).rerankingModel();
    const result = await rerank({ model, query: ref.query, documents: ref.documents, topN: 3 });
    expect(result.ranking.map((r) => r.originalIndex)).toEqual(order.slice(0, 3));
    expect(result.ranking.map((r) => r.score)).toEqual(order.slice(0, 3).map((i) => scores[i]));
    expect(result.rerankedDocuments).toEqual(order.slice(0, 3).map((i) => ref.documents[i]));
    const custom = await rerank({ model, query: ref.query, documents: ref.documents, providerOptions: { weft: { instruction: ref.custom_instruction.instruction } } });
    custom.ranking.forEach((r) => expect(Math.abs(r.score - ref.custom_instruction.scores[r.originalIndex]!)).toBeLessThan(1e-4));
    const objects = await rerank({ model, query: ref.query, documents: [{ text: ref.documents[0]! }, { text: ref.documents[1]! }] });
    expect(objects.ranking).toHaveLength(2);
    await using owned = weftReranking({ model: DIR, threads: 1 });
    const alone = await rerank({ model: owned, query: ref.query, documents: ref.documents });
    expect(alone.ranking.map((r) => r.originalIndex)).toEqual(order);
  });

  it('an isolated pipeline reranks in its child process', async () => {
    await using isolated = await Pipeline.create({ model: DIR, threads: 2, isolation: 'process' });
    const result = await isolated.rerank(ref.query, ref.documents);
    expect(result.scores).toEqual(scores);
    await expect(isolated.rerank(ref.query, ['a', ''])).rejects.toThrow(InvalidOptionError);
    const controller = new AbortController();
    const many = Array.from({ length: 200 }, (_, i) => `${i}: ${ref.documents[3]!}`);
    const run = isolated.rerank(ref.query, many, { signal: controller.signal });
    setTimeout(() => controller.abort(), 1);
    await expect(run).rejects.toThrow(AbortError);
    expect((await isolated.rerank(ref.query, [ref.documents[0]!])).scores).toEqual([scores[0]]);
  });
});

describe('a model that cannot rerank, behind weft serve', () => {
  it('is a 400 naming the fix, and UnsupportedModelError over RemotePipeline', async () => {
    await using pipe = await Pipeline.create({ model: join(REPO_ROOT, 'test', 'fixtures', 'qwen3-embed-tiny'), threads: 1 });
    const server = await WeftServer.start({ pipeline: pipe, modelName: 'embedder', port: 0, parsers: { tool: 'none', reasoning: 'none' } });
    try {
      const response = await fetch(`${server.url}/v1/rerank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'q', documents: ['a'] }) });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: { message: string; code: string } };
      expect(error.code).toBe('model_not_supported');
      expect(error.message).toMatch(/is not a reranker/);
      const remote = await RemotePipeline.create({ remote: { baseURL: `${server.url}/v1`, model: 'embedder' } });
      await expect(remote.rerank('q', ['a'])).rejects.toThrow(UnsupportedModelError);
    } finally {
      await server.close(1000);
    }
  });
});

describe('weft/langchain WeftReranker', () => {
  it('compressDocuments keeps the topN best, with metadata.relevanceScore, on a folder it opens and closes', async () => {
    const { WeftReranker } = await import('../../src/langchain/index.js');
    const { Document } = await import('@langchain/core/documents');
    await using reranker = new WeftReranker({ pipeline: { model: DIR, threads: 2 }, topN: 2 });
    const docs = ref.documents.map((text, i) => new Document({ pageContent: text, metadata: { source: i } }));
    const kept = await reranker.compressDocuments(docs, ref.query);
    const want = ref.default_instruction.scores.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0]).slice(0, 2);
    expect(kept.map((d) => d.metadata.source)).toEqual(want.map(([, i]) => i));
    kept.forEach((d, k) => expect(Math.abs((d.metadata.relevanceScore as number) - want[k]![0])).toBeLessThan(1e-4));
    expect(await reranker.compressDocuments([], ref.query)).toEqual([]);
    expect((await reranker.rerank(ref.documents, ref.query)).map((r) => r.index)).toHaveLength(5);
    expect(() => new WeftReranker({ pipeline: DIR, colour: 'red' } as never)).toThrow(InvalidOptionError);
  });
});
