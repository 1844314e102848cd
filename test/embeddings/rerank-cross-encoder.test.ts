/**
 * pipe.rerank() on cross-encoders made by tools/embeddings/make_rerank_fixtures.py:
 * test/fixtures/bert-cross-encoder-tiny (BertForSequenceClassification: each
 * pair runs as [CLS] q [SEP] d [SEP] with token types through the BERT encoder,
 * its [CLS] state through the folder's pooler and classifier) and
 * xlmr-cross-encoder-tiny (XLMRobertaForSequenceClassification, bge-reranker's
 * shape: <s> q </s> </s> d </s>, RoBERTa's classifier.dense / out_proj).
 * Scores against sentence-transformers' CrossEncoder.predict, alone, all at once
 * and next to a failing call; over-long pairs cut only when asked.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/create.js';
import { PromptTooLongError } from '../../src/errors.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';

type Reference = { query: string; documents: string[]; scores: number[]; pairs: { input_ids: number[] }[] };
const DIR = join(REPO_ROOT, 'test', 'fixtures', 'bert-cross-encoder-tiny');
const XLMR_DIR = join(REPO_ROOT, 'test', 'fixtures', 'xlmr-cross-encoder-tiny');
const ref = readReference(DIR) as unknown as Reference;
const expectScores = (got: readonly number[], want: readonly number[]) => {
  expect(got).toHaveLength(want.length);
  got.forEach((score, i) => expect(Math.abs(score - want[i]!), `document ${i}`).toBeLessThan(1e-4));
};

describe.each([
  { name: 'bert-cross-encoder-tiny', dir: DIR, ref },
  { name: 'xlmr-cross-encoder-tiny', dir: XLMR_DIR, ref: readReference(XLMR_DIR) as unknown as Reference },
])('$name', ({ dir, ref }) => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: dir, threads: 2 });
  });
  afterAll(async () => pipe.close());

  it('encodes each pair with the tokenizer\'s pair template', async () => {
    const { usage } = await pipe.rerank(ref.query, [ref.documents[0]!]);
    expect(usage.promptTokens).toBe(ref.pairs[0]!.input_ids.length);
  });

  it('scores all pairs at once as CrossEncoder.predict does (sigmoid of the logit), ranked best first', async () => {
    const { scores, ranking, usage } = await pipe.rerank(ref.query, ref.documents);
    expectScores(scores, ref.scores);
    expect(ranking.map((r) => r.index)).toEqual(ref.scores.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0]).map(([, i]) => i));
    expect(usage.promptTokens).toBe(ref.pairs.reduce((n, p) => n + p.input_ids.length, 0));
  });

  it('one document at a time gives the same scores; a failing call next to it harms nothing', async () => {
    const [alone, failing] = await Promise.allSettled([
      Promise.all(ref.documents.map((doc) => pipe.rerank(ref.query, [doc]))),
      pipe.rerank(ref.query, ['fine', 'x '.repeat(400)]),
    ]);
    expect(alone.status).toBe('fulfilled');
    expectScores((alone as PromiseFulfilledResult<{ scores: number[] }[]>).value.map((r) => r.scores[0]!), ref.scores);
    expect(failing.status).toBe('rejected');
    expect((failing as PromiseRejectedResult).reason).toBeInstanceOf(PromptTooLongError);
    expect(String((failing as PromiseRejectedResult).reason.message)).toMatch(/^documents\[1\]/);
  });

});

describe('bert-cross-encoder-tiny, cut to fit', () => {
  it('a pair longer than a step holds is cut from its longer side with truncate, refused without', async () => {
    const small = await Pipeline.create({ model: DIR, threads: 1, scheduler: { maxNumBatchedTokens: 24 } });
    try {
      await expect(small.rerank(ref.query, [ref.documents[3]!])).rejects.toThrow(PromptTooLongError);
      const { scores, usage } = await small.rerank(ref.query, [ref.documents[3]!], { truncate: true });
      expect(usage.promptTokens).toBe(24);
      expect(scores[0]).toBeGreaterThan(0);
      expect(scores[0]).toBeLessThan(1);
    } finally {
      await small.close();
    }
  });
});
