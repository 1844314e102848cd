/**
 * pipe.rerank() on a Qwen3-Reranker-shaped model (test/fixtures/qwen3-rerank-tiny,
 * made by tools/embeddings/make_rerank_fixtures.py): weft's scores against the
 * model card's computation in Python, alone and batched with generation,
 * chunked and preempted; how a folder is recognised as a reranker; and every
 * bad input a typed error that harms no other request.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { Pipeline } from '../../src/create.js';
import { AbortError, InvalidOptionError, PromptTooLongError, UnsupportedModelError } from '../../src/errors.js';
import { DEFAULT_RERANK_INSTRUCTION, YES_NO_PREFIX, YES_NO_SUFFIX, yesNoBody } from '../../src/embeddings/rerank-yes-no.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-rerank-tiny');
interface Case { instruction: string; token_ids: number[][]; scores: number[]; scores_batched: number[] }
const ref = readReference(DIR) as unknown as { query: string; documents: string[]; yes_token_id: number; no_token_id: number; default_instruction: Case; custom_instruction: Case };

const expectScores = (got: readonly number[], want: readonly number[]) => {
  expect(got).toHaveLength(want.length);
  got.forEach((score, i) => expect(Math.abs(score - want[i]!), `document ${i}`).toBeLessThan(1e-4));
};
const made: string[] = [];
/** A copy of the fixture under another folder name. */
function copyNamed(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'weft-rerank-')), name);
  cpSync(DIR, dir, { recursive: true });
  made.push(dir);
  return dir;
}
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('qwen3-rerank-tiny', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: DIR, threads: 2 });
  });
  afterAll(async () => pipe.close());

  it("builds each pair's tokens as the model card does", () => {
    expect(pipe.tokenizer.tokenToId('yes')).toBe(ref.yes_token_id);
    expect(pipe.tokenizer.tokenToId('no')).toBe(ref.no_token_id);
    const plain = (text: string) => pipe.tokenizer.encode(text, { addSpecialTokens: false });
    ref.documents.forEach((doc, i) => {
      const ids = [...plain(YES_NO_PREFIX), ...plain(yesNoBody(DEFAULT_RERANK_INSTRUCTION, ref.query, doc)), ...plain(YES_NO_SUFFIX)];
      expect(ids, `document ${i}`).toEqual(ref.default_instruction.token_ids[i]);
    });
  });

  it("scores equal the model card's P(yes) within 1e-4, ranked by score", async () => {
    const { scores, ranking, usage } = await pipe.rerank(ref.query, ref.documents);
    expectScores(scores, ref.default_instruction.scores);
    expect(usage.promptTokens).toBe(ref.default_instruction.token_ids.reduce((sum, ids) => sum + ids.length, 0));
    const order = ref.default_instruction.scores.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0]).map(([, i]) => i);
    expect(ranking.map((r) => r.index)).toEqual(order);
    ranking.forEach((r) => expect(r.score).toBe(scores[r.index]));
  });

  it('one document at a time, with a custom instruction, and topN', async () => {
    for (const [i, doc] of ref.documents.entries()) expectScores((await pipe.rerank(ref.query, [doc])).scores, [ref.default_instruction.scores[i]!]);
    expectScores((await pipe.rerank(ref.query, ref.documents, { instruction: ref.custom_instruction.instruction })).scores, ref.custom_instruction.scores);
    const top = await pipe.rerank(ref.query, ref.documents, { topN: 2 });
    expect(top.scores).toHaveLength(5);
    expect(top.ranking).toHaveLength(2);
    expect(top.ranking[0]!.score).toBeGreaterThanOrEqual(top.ranking[1]!.score);
    expect(top.ranking[1]!.score).toBeGreaterThanOrEqual(Math.max(...top.scores.filter((_, i) => !top.ranking.some((r) => r.index === i))));
  });

  it('scores the same while chats run in the same steps', async () => {
    const chats = Array.from({ length: 3 }, (_, i) => pipe.generate(`story ${i}:`, { maxTokens: 24, temperature: 0 }));
    const [result] = await Promise.all([pipe.rerank(ref.query, [...ref.documents, ...ref.documents]), ...chats]);
    expectScores(result.scores, [...ref.default_instruction.scores, ...ref.default_instruction.scores]);
    for (const pool of pipe.stats().kv.pools) expect(pool.usedBlocks).toBe(0);
  });

  it('refuses bad input with a typed error naming it, and the next call still scores', async () => {
    await expect(pipe.rerank('', ref.documents)).rejects.toThrow(new InvalidOptionError('query', 'is empty; give the text the documents are ranked against'));
    await expect(pipe.rerank(3 as unknown as string, ref.documents)).rejects.toThrow(/query: expected a string, got number/);
    await expect(pipe.rerank(ref.query, [])).rejects.toThrow(/documents: is empty; give at least one document/);
    await expect(pipe.rerank(ref.query, 'one' as unknown as string[])).rejects.toThrow(/documents: expected an array of strings/);
    await expect(pipe.rerank(ref.query, ['fine', 7 as unknown as string])).rejects.toThrow(new InvalidOptionError('documents[1]', 'expected a string, got number'));
    await expect(pipe.rerank(ref.query, ['fine', ''])).rejects.toThrow(/documents\[1\]: is empty/);
    await expect(pipe.rerank(ref.query, ['fine'], { topN: 0 })).rejects.toThrow(/topN: must be a positive integer/);
    await expect(pipe.rerank(ref.query, ['fine'], { colour: 'red' } as never)).rejects.toThrow(/colour: is not a rerank option/);
    await expect(pipe.rerank(ref.query, ['fine'], { instruction: ' ' })).rejects.toThrow(/instruction: must be a non-empty string/);
    // A bad call beside a good one leaves the good one's scores alone.
    const [good, bad] = await Promise.allSettled([pipe.rerank(ref.query, ref.documents), pipe.rerank(ref.query, ['fine', 'weft '.repeat(600)])]);
    expect(bad.status === 'rejected' && bad.reason instanceof PromptTooLongError).toBe(true);
    expectScores(good.status === 'fulfilled' ? good.value.scores : [], ref.default_instruction.scores);
  });

  it('a pair longer than the context is a PromptTooLongError naming the document, or is cut with truncate', async () => {
    const long = 'weft runs continuous batching in TypeScript. '.repeat(80); // > 512 tokens
    await expect(pipe.rerank(ref.query, ['short', long])).rejects.toThrow(PromptTooLongError);
    await expect(pipe.rerank(ref.query, ['short', long])).rejects.toThrow(/documents\[1\]: the pair makes \d+ tokens; the model's context holds 511 \(set truncate: true/);
    const { scores, usage } = await pipe.rerank(ref.query, ['short', long], { truncate: true });
    expect(scores).toHaveLength(2);
    expect(scores.every((s) => s > 0 && s < 1)).toBe(true);
    const short = (await pipe.rerank(ref.query, ['short'])).usage.promptTokens;
    expect(usage.promptTokens).toBe(short + 511);
  });

  it('an aborted call rejects with AbortError and leaves no blocks behind', async () => {
    const controller = new AbortController();
    const run = pipe.rerank(ref.query, Array(120).fill(ref.documents[3]!), { signal: controller.signal });
    pipe.once('step', () => controller.abort());
    await expect(run).rejects.toThrow(AbortError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const pool of pipe.stats().kv.pools) expect(pool.usedBlocks).toBe(0);
    const aborted = new AbortController();
    aborted.abort();
    await expect(pipe.rerank(ref.query, ['x'], { signal: aborted.signal })).rejects.toThrow(AbortError);
  });
});

describe('chunked and preempted pairs', () => {
  it('score the same in 16-token chunks, preempted by generations in a cache of 30 blocks', async () => {
    await using pipe = await Pipeline.create({
      model: DIR,
      threads: 2,
      kvCache: { size: 30 * 3 * 2 * 16 * 2 * 4 * 16, blockSize: 16, precision: 'f32' }, // 30 blocks of 16 tokens
      scheduler: { maxNumSeqs: 8, maxNumBatchedTokens: 16 },
    });
    const generations = Array.from({ length: 6 }, (_, i) => pipe.generate(ref.documents[i % 5]!, { maxTokens: 40, ignoreEos: true }));
    const [result] = await Promise.all([pipe.rerank(ref.query, ref.documents), ...generations]);
    expectScores(result.scores, ref.default_instruction.scores);
    expect(pipe.stats().preemptions).toBeGreaterThan(0);
    for (const pool of pipe.stats().kv.pools) expect(pool.usedBlocks).toBe(0);
  });
});

describe('which folders rerank', () => {
  it('a causal LM not named *reranker* is refused with how to mark it, and reranks with the pipeline option', async () => {
    const plain = copyNamed('tiny-chat');
    {
      await using pipe = await Pipeline.create({ model: plain, threads: 2 });
      await expect(pipe.rerank(ref.query, ['a'])).rejects.toThrow(UnsupportedModelError);
      await expect(pipe.rerank(ref.query, ['a'])).rejects.toThrow(/is not a reranker: its architecture is Qwen3ForCausalLM.*rerank: \{\}/);
      expect((await pipe.generate('hello', { maxTokens: 2 })).text).toBeTypeOf('string');
    }
    await using marked = await Pipeline.create({ model: plain, threads: 2, rerank: { instruction: ref.custom_instruction.instruction } });
    expectScores((await marked.rerank(ref.query, ref.documents)).scores, ref.custom_instruction.scores);
  });

  it('the rerank pipeline option is checked at create', async () => {
    await expect(Pipeline.create({ model: DIR, rerank: { instruction: 3 } as never })).rejects.toThrow(/rerank.instruction: must be a non-empty string/);
    await expect(Pipeline.create({ model: DIR, rerank: { format: 'x' } as never })).rejects.toThrow(/rerank.format: is not a rerank option/);
  });

  it('a pipeline over your own backend cannot rerank (weft reads the head from a folder)', async () => {
    const backend = await CpuBackend.load(DIR, { threads: 1 });
    const tokenizer = await Pipeline.create({ model: DIR, threads: 1 }).then(async (p) => { const t = p.tokenizer; await p.close(); return t; });
    await using pipe = await Pipeline.create({ backend, tokenizer });
    await expect(pipe.rerank(ref.query, ['a'])).rejects.toThrow(/your own backend cannot rerank/);
  });

  it('an embedding model folder is not a reranker', async () => {
    await using pipe = await Pipeline.create({ model: join(REPO_ROOT, 'test', 'fixtures', 'qwen3-embed-tiny'), threads: 2 });
    await expect(pipe.rerank(ref.query, ['a'])).rejects.toThrow(/is not a reranker: its architecture is Qwen3Model/);
  });
});
