/** RemotePipeline's reading of a /rerank answer, in the shapes llama.cpp's server and vLLM send. */
import { describe, expect, it } from 'vitest';
import { RemoteError } from '../../src/errors.js';
import { rerankResultOf } from '../../src/remote/rerank-answer.js';

describe('rerankResultOf', () => {
  it("reads llama.cpp's answer (input order, prompt_tokens) and ranks it here", () => {
    const answer = { model: 'm', object: 'list', usage: { prompt_tokens: 146, total_tokens: 146 }, results: [{ index: 0, relevance_score: 0.02 }, { index: 1, relevance_score: 0.9 }, { index: 2, relevance_score: 0.02 }] };
    expect(rerankResultOf(answer, 3, 2)).toEqual({
      scores: [0.02, 0.9, 0.02],
      ranking: [{ index: 1, score: 0.9 }, { index: 0, score: 0.02 }],
      usage: { promptTokens: 146 },
    });
  });

  it("reads vLLM's answer (best first, documents, total_tokens only)", () => {
    const answer = { id: 'rerank-1', model: 'm', usage: { total_tokens: 30 }, results: [{ index: 1, document: { text: 'b' }, relevance_score: 0.7 }, { index: 0, document: { text: 'a' }, relevance_score: 0.1 }] };
    expect(rerankResultOf(answer, 2, undefined)).toEqual({ scores: [0.1, 0.7], ranking: [{ index: 1, score: 0.7 }, { index: 0, score: 0.1 }], usage: { promptTokens: 30 } });
  });

  it('a wrong answer is a RemoteError saying what is missing', () => {
    expect(() => rerankResultOf({ data: [] }, 1, undefined)).toThrow(RemoteError);
    expect(() => rerankResultOf({ results: [{ index: 0, relevance_score: 0.5 }] }, 2, undefined)).toThrow(/scores 1 of 2 documents \(none for documents\[1\]\)/);
    expect(() => rerankResultOf({ results: [{ index: 5, relevance_score: 0.5 }] }, 2, undefined)).toThrow(/not \{ index in \[0, 2\), relevance_score: number \}/);
    expect(() => rerankResultOf({ results: [{ index: 0, score: 0.5 }] }, 1, undefined)).toThrow(RemoteError);
  });
});
