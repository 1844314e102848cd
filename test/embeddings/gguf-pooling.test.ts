/**
 * A GGUF embedding file carries its pooling in `{arch}.pooling_type`, as
 * llama.cpp's converter writes it for Qwen3-Embedding and other embedders.
 * qwen3-embed-tiny converted to GGUF (F32, the same weights) must embed as
 * sentence-transformers did, whichever pooling the file names; the types weft
 * does not embed with are typed errors that say what to do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/create.js';
import type { PipelineOptions } from '../../src/pipeline/options.js';
import { UnsupportedModelError } from '../../src/errors.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';
import { meta, type MetaValue } from '../support/gguf-writer.js';
import { convertHfToGguf } from '../support/hf-to-gguf.js';
import { tokenizerJsonToGgufMeta } from '../support/tokenizer-json-to-gguf.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-embed-tiny');
const ref = readReference(DIR) as unknown as { token_ids: number[][]; embeddings: number[][]; mean_unnormalized: number[][] };
const work = mkdtempSync(join(tmpdir(), 'weft-gguf-pool-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** qwen3-embed-tiny as GGUF with `qwen3.pooling_type` set to `type` (left out when undefined). */
async function ggufWithPooling(type: number | undefined): Promise<string> {
  const file = join(work, `pooling-${type ?? 'absent'}.gguf`);
  const pooling: Array<[string, MetaValue]> = type === undefined ? [] : [['qwen3.pooling_type', meta.u32(type)]];
  await convertHfToGguf(DIR, file, 'F32', [...tokenizerJsonToGgufMeta(DIR, '<|endoftext|>'), ...pooling]);
  return file;
}
const normalized = (v: number[]) => {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};
function expectClose(got: readonly Float32Array[], want: readonly number[][]): void {
  expect(got).toHaveLength(want.length);
  got.forEach((v, i) => {
    let worst = 0;
    v.forEach((x, j) => (worst = Math.max(worst, Math.abs(x - want[i]![j]!))));
    expect(worst, `text ${i}`).toBeLessThan(1e-4);
  });
}

describe('GGUF pooling_type', () => {
  const open: Pipeline[] = [];
  const create = async (type: number | undefined, options: Omit<PipelineOptions, 'model' | 'isolation'> = {}) => {
    const pipe = await Pipeline.create({ model: await ggufWithPooling(type), threads: 1, ...options });
    open.push(pipe);
    return pipe;
  };
  afterAll(async () => Promise.all(open.map((p) => p.close())));

  let last: Pipeline;
  beforeAll(async () => (last = await create(3)));

  it('3 (last): the last token, normalised, as sentence-transformers embeds the folder', async () => {
    expectClose((await last.embed(ref.token_ids)).embeddings, ref.embeddings);
  });

  it('1 (mean): the mean of the token states, normalised', async () => {
    const pipe = await create(1);
    expectClose((await pipe.embed(ref.token_ids)).embeddings, ref.mean_unnormalized.map(normalized));
  });

  it('absent: a generation model (f16 cache by default), embedded with the decoder default', async () => {
    const pipe = await create(undefined, { kvCache: { precision: 'f32' } });
    expectClose((await pipe.embed(ref.token_ids)).embeddings, ref.embeddings);
  });

  it('0 (none) needs the embedding.pooling option, and then pools as asked', async () => {
    const none = await create(0);
    await expect(none.embed(ref.token_ids)).rejects.toThrow(UnsupportedModelError);
    await expect(none.embed(ref.token_ids)).rejects.toThrow(/embedding: \{ pooling/);
    const pooled = await create(0, { embedding: { pooling: 'mean' } });
    expectClose((await pooled.embed(ref.token_ids)).embeddings, ref.mean_unnormalized.map(normalized));
  });

  it('4 (rank) is a reranker: embed() says so, and the pipeline still generates', async () => {
    const rank = await create(4);
    await expect(rank.embed(['a'])).rejects.toThrow(/reranker/);
    expect((await rank.generate('hello', { maxTokens: 2, temperature: 0 })).text).toBeTypeOf('string');
  });
});
