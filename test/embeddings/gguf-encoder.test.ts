/**
 * A `bert` GGUF (an embedding model as llama.cpp's converter writes it:
 * test/support/bert-to-gguf.ts) embeds on the CPU backend: the encoder's
 * tensors by llama.cpp's names, its WordPiece vocabulary undone from the
 * phantom-space form, its pooling from bert.pooling_type. bert-embed-tiny as
 * GGUF gives sentence-transformers' vectors from the texts themselves.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/create.js';
import { ModelLoadError } from '../../src/errors.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';
import { convertBertToGguf } from '../support/bert-to-gguf.js';
import { meta } from '../support/gguf-writer.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'bert-embed-tiny');
const ref = readReference(DIR) as unknown as { texts: string[]; token_ids: number[][]; embeddings: number[][]; cls_unnormalized: number[][] };
const work = mkdtempSync(join(tmpdir(), 'weft-gguf-bert-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function expectClose(got: readonly Float32Array[], want: readonly number[][]): void {
  expect(got).toHaveLength(want.length);
  got.forEach((v, i) => {
    let worst = 0;
    v.forEach((x, j) => (worst = Math.max(worst, Math.abs(x - want[i]![j]!))));
    expect(worst, `text ${i}`).toBeLessThan(1e-4);
  });
}

describe('bert-embed-tiny as a bert GGUF', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    const file = join(work, 'bert-embed-tiny.gguf');
    await convertBertToGguf(DIR, file, 'F32');
    pipe = await Pipeline.create({ model: file, threads: 2 });
  });
  afterAll(async () => pipe.close());

  it('tokenizes the texts as the folder\'s WordPiece tokenizer does', async () => {
    for (const [i, text] of ref.texts.entries()) expect(await pipe.tokenizer.encode(text), `text ${i}`).toEqual(ref.token_ids[i]);
  });

  it('embeds the texts as sentence-transformers embeds the folder (mean pooling from bert.pooling_type, normalised)', async () => {
    expectClose((await pipe.embed(ref.texts)).embeddings, ref.embeddings);
  });

  it('pooling_type 2 (CLS) pools the [CLS] state', async () => {
    const file = join(work, 'cls.gguf');
    await convertBertToGguf(DIR, file, 'F32', [['bert.pooling_type', meta.u32(2)]]);
    const cls = await Pipeline.create({ model: file, threads: 1 });
    try {
      expectClose((await cls.embed(ref.texts, { normalize: false })).embeddings, ref.cls_unnormalized);
    } finally {
      await cls.close();
    }
  });

  it('a bert file that says it is causal is a ModelLoadError naming the key', async () => {
    const file = join(work, 'causal.gguf');
    await convertBertToGguf(DIR, file, 'F32', [['bert.attention.causal', meta.bool(true)]]);
    await expect(Pipeline.create({ model: file, threads: 1 })).rejects.toThrow(ModelLoadError);
    await expect(Pipeline.create({ model: file, threads: 1 })).rejects.toThrow(/bert\.attention\.causal is true/);
  });

  it('generating from it is refused: an encoder embeds', async () => {
    await expect(pipe.generate('hello', { maxTokens: 2 })).rejects.toThrow(/embed/);
  });
});
