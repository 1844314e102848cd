/**
 * A `bert` GGUF (an embedding model as llama.cpp's converter writes it:
 * test/support/bert-to-gguf.ts) embeds on the CPU backend: the encoder's
 * tensors by llama.cpp's names, its WordPiece vocabulary undone from the
 * phantom-space form, its pooling from bert.pooling_type. bert-embed-tiny as
 * GGUF gives sentence-transformers' vectors from the texts themselves, and
 * nomic-embed-tiny as a nomic-bert GGUF (fused attn_qkv, rotary, SwiGLU) too.
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

describe('nomic-embed-tiny as a nomic-bert GGUF', () => {
  const NOMIC_DIR = join(REPO_ROOT, 'test', 'fixtures', 'nomic-embed-tiny');
  const nomicRef = readReference(NOMIC_DIR) as unknown as { texts: string[]; token_ids: number[][]; embeddings: number[][] };

  it("embeds as sentence-transformers embeds the folder: q, k, v cut from the fused attn_qkv, rotary base from rope.freq_base", async () => {
    const file = join(work, 'nomic-embed-tiny.gguf');
    await convertBertToGguf(NOMIC_DIR, file, 'F32');
    await using pipe = await Pipeline.create({ model: file, threads: 2 });
    for (const [i, text] of nomicRef.texts.entries()) expect(await pipe.tokenizer.encode(text), `text ${i}`).toEqual(nomicRef.token_ids[i]);
    expectClose((await pipe.embed(nomicRef.texts)).embeddings, nomicRef.embeddings);
  });

  it('F16 matrices stay within 1e-3 of the F32 vectors, Q8_0 within cosine 0.999; another rotary base changes them', async () => {
    const f16 = join(work, 'nomic-f16.gguf');
    const base = join(work, 'nomic-base.gguf');
    await convertBertToGguf(NOMIC_DIR, f16, 'F16');
    await convertBertToGguf(NOMIC_DIR, base, 'F32', [['nomic-bert.rope.freq_base', meta.f32(10000)]]);
    await using half = await Pipeline.create({ model: f16, threads: 1 });
    await using other = await Pipeline.create({ model: base, threads: 1 });
    const got = (await half.embed(nomicRef.texts)).embeddings;
    got.forEach((v, i) => v.forEach((x, j) => expect(Math.abs(x - nomicRef.embeddings[i]![j]!)).toBeLessThan(1e-3)));
    const q8 = join(work, 'nomic-q8.gguf');
    await convertBertToGguf(NOMIC_DIR, q8, 'Q8_0'); // attn_qkv quantized: its thirds are whole rows of blocks
    await using quantized = await Pipeline.create({ model: q8, threads: 1 });
    (await quantized.embed(nomicRef.texts)).embeddings.forEach((v, i) => {
      const cosine = v.reduce((sum, x, j) => sum + x * nomicRef.embeddings[i]![j]!, 0); // both are unit vectors
      expect(cosine, `text ${i}`).toBeGreaterThan(0.999);
    });
    const moved = (await other.embed(nomicRef.texts[3]!)).embeddings[0]!;
    expect(Math.max(...moved.map((x, j) => Math.abs(x - nomicRef.embeddings[3]![j]!)))).toBeGreaterThan(1e-3);
  });

  it('nomic-bert-moe is refused by name', async () => {
    const file = join(work, 'moe.gguf');
    await convertBertToGguf(NOMIC_DIR, file, 'F32', [['general.architecture', meta.str('nomic-bert-moe')]]);
    await expect(Pipeline.create({ model: file, threads: 1 })).rejects.toThrow(/nomic-bert-moe.*not supported yet: the mixture-of-experts NomicBert/);
  });
});
