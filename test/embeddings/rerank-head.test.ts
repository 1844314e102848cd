/**
 * The cross-encoder half of reranking without an encoder forward: the head
 * (pooler dense + tanh, classifier, CrossEncoder's activation) read from
 * test/fixtures/bert-cross-encoder-tiny's safetensors and applied to the
 * [CLS] states transformers computed, and the pair template read from its
 * tokenizer.json, both against tools/embeddings/make_rerank_fixtures.py's
 * numbers from sentence-transformers and torch.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crossEncoderActivation, crossEncoderLogits, crossEncoderScore } from '../../src/embeddings/rerank-cross-encoder.js';
import { readReranker, type CrossEncoderReranker } from '../../src/embeddings/rerank-config.js';
import { encodePair, encodePairs, pairTemplateOf, specialTokenCount } from '../../src/embeddings/rerank-pair.js';
import { ModelLoadError, PromptTooLongError, UnsupportedModelError } from '../../src/errors.js';
import { readRows } from '../../src/embeddings/rerank-weights.js';
import { readSafetensorsHeader } from '../../src/model-files/safetensors.js';
import { readReference, REPO_ROOT } from '../native/helpers.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'bert-cross-encoder-tiny');
interface Pair { input_ids: number[]; token_type_ids: number[]; query_ids: number[]; document_ids: number[]; cls_hidden: number[]; logit: number }
const ref = readReference(DIR) as unknown as {
  pairs: Pair[]; scores: number[]; activation: string;
  truncated_pair: { document: number; max_length: number; input_ids: number[]; token_type_ids: number[] };
};
const noTokens = { tokenToId: () => undefined };

describe('cross-encoder head', () => {
  it('is recognised from config.json and read from the safetensors', async () => {
    const reranker = (await readReranker(DIR, undefined, noTokens)) as CrossEncoderReranker;
    expect(reranker.kind).toBe('cross-encoder');
    expect(reranker.head.activation).toBe('sigmoid');
    expect(ref.activation).toBe('Sigmoid');
    expect([reranker.head.dense.rows, reranker.head.dense.cols, reranker.head.out.rows]).toEqual([32, 32, 1]);
  });

  it("gives the model's logit and CrossEncoder.predict()'s score from the [CLS] state, within 1e-5", async () => {
    const { head } = (await readReranker(DIR, undefined, noTokens)) as CrossEncoderReranker;
    ref.pairs.forEach((pair, i) => {
      const cls = Float32Array.from(pair.cls_hidden);
      expect(Math.abs(crossEncoderLogits(head, cls)[0]! - pair.logit), `pair ${i}`).toBeLessThan(1e-5);
      expect(Math.abs(crossEncoderScore(head, cls) - ref.scores[i]!), `pair ${i}`).toBeLessThan(1e-5);
    });
    expect(crossEncoderScore({ ...head, activation: 'identity' }, Float32Array.from(ref.pairs[0]!.cls_hidden))).toBeCloseTo(ref.pairs[0]!.logit, 5);
    expect(() => crossEncoderLogits(head, new Float32Array(8))).toThrow(RangeError);
  });

  it('reads the activation config.json names, in both of its spellings', () => {
    expect(crossEncoderActivation({}, 'config.json')).toBe('sigmoid');
    expect(crossEncoderActivation({ sentence_transformers: { activation_fn: 'torch.nn.modules.linear.Identity' } }, 'config.json')).toBe('identity');
    expect(crossEncoderActivation({ sbert_ce_default_activation_function: 'torch.nn.modules.activation.Sigmoid' }, 'config.json')).toBe('sigmoid');
    expect(() => crossEncoderActivation({ sentence_transformers: { activation_fn: 'torch.nn.Tanh' } }, 'config.json')).toThrow(UnsupportedModelError);
  });
});

describe('pair template', () => {
  const template = pairTemplateOf(JSON.parse(readFileSync(join(DIR, 'tokenizer.json'), 'utf8')), 'tokenizer.json');

  it("puts query and document together as the tokenizer's pair template does, with token types", () => {
    expect(specialTokenCount(template)).toBe(3);
    ref.pairs.forEach((pair, i) => {
      const { ids, typeIds } = encodePair(template, pair.query_ids, pair.document_ids, 128, false, `documents[${i}]`);
      expect(ids, `pair ${i}`).toEqual(pair.input_ids);
      expect(typeIds, `pair ${i}`).toEqual(pair.token_type_ids);
    });
  });

  it("cuts the longer side first (longest_first), else PromptTooLongError naming the document", () => {
    const { document, max_length: max, input_ids, token_type_ids } = ref.truncated_pair;
    const pair = ref.pairs[document]!;
    expect(encodePair(template, pair.query_ids, pair.document_ids, max, true, 'documents[3]')).toEqual({ ids: input_ids, typeIds: token_type_ids });
    expect(() => encodePair(template, pair.query_ids, pair.document_ids, max, false, 'documents[3]')).toThrow(PromptTooLongError);
    expect(() => encodePair(template, pair.query_ids, pair.document_ids, max, false, 'documents[3]')).toThrow(/documents\[3\]: the query and document make \d+ tokens/);
    // Both sides long: each keeps about half.
    const a = Array.from({ length: 40 }, (_, i) => 10 + i);
    const b = Array.from({ length: 30 }, (_, i) => 60 + i);
    const cut = encodePair(template, a, b, 23, true, 'documents[0]');
    expect(cut.ids).toHaveLength(23);
    expect(cut.typeIds.filter((t) => t === 1)).toHaveLength(10 + 1);
  });

  it('encodes a whole call through the tokenizer interface: the query once, each document on its own', async () => {
    // The WordPiece tokenizer lands with the BERT encoder; here each side's ids are the fixture tokenizer's own.
    const sides = new Map<string, number[]>([['q', ref.pairs[0]!.query_ids], ...ref.pairs.map((p, i): [string, number[]] => [`d${i}`, p.document_ids])]);
    const asked: [string, boolean][] = [];
    const encoder = { encode: async (text: string, special: boolean) => (asked.push([text, special]), sides.get(text)!) };
    const pairs = await encodePairs(encoder, template, 'q', ref.pairs.map((_, i) => `d${i}`), 128, false);
    expect(pairs.map((p) => p.ids)).toEqual(ref.pairs.map((p) => p.input_ids));
    expect(pairs.map((p) => p.typeIds)).toEqual(ref.pairs.map((p) => p.token_type_ids));
    expect(asked.every(([, special]) => !special)).toBe(true);
    expect(asked.filter(([text]) => text === 'q')).toHaveLength(1);
    await expect(encodePairs(encoder, template, 'q', ['d0', 'd3'], ref.pairs[0]!.input_ids.length, false)).rejects.toThrow(/documents\[1\]: the query and document make/);
  });

  it("reads RoBERTa's processor and refuses a tokenizer without a pair template", () => {
    const roberta = pairTemplateOf({ post_processor: { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0] } }, 'tokenizer.json');
    expect(encodePair(roberta, [5, 6], [7], 64, false, 'documents[0]')).toEqual({ ids: [0, 5, 6, 2, 2, 7, 2], typeIds: [0, 0, 0, 0, 0, 0, 0] });
    const sequence = pairTemplateOf({ post_processor: { type: 'Sequence', processors: [{ type: 'ByteLevel' }, { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 2] }] } }, 'tokenizer.json');
    expect(encodePair(sequence, [5], [7], 64, false, 'documents[0]').ids).toEqual([2, 5, 3, 7, 3]);
    expect(() => pairTemplateOf({ post_processor: null }, 'tokenizer.json')).toThrow(ModelLoadError);
    expect(() => pairTemplateOf({ post_processor: { type: 'ByteLevel' } }, 'tokenizer.json')).toThrow(/no pair template weft reads/);
  });
});

describe('head weights from safetensors', () => {
  it('reads rows of F32, F16 and BF16 tensors as float32', async () => {
    // Bit patterns and values from torch: bfloat16 [1.5, -2.25, 3e-3, 65504, -1e30] rounds to these.
    const bf16 = [16320, -16368, 15173, 18304, -3766];
    const bf16Values = [1.5, -2.25, 0.0030059814453125, 65536.0, -1.0002555517425873e30];
    const f16 = [0x3e00, 0xc080, 0x0001, 0x7bff, 0x3c00, 0x0000]; // 1.5, -2.25, 2^-24, 65504, 1, 0
    const f32 = [0.25, -8, 1e-7, 3];
    const parts = [
      { name: 'b', dtype: 'BF16', shape: [5], bytes: Buffer.from(Int16Array.from(bf16).buffer) },
      { name: 'h', dtype: 'F16', shape: [3, 2], bytes: Buffer.from(Uint16Array.from(f16).buffer) },
      { name: 'f', dtype: 'F32', shape: [2, 2], bytes: Buffer.from(Float32Array.from(f32).buffer) },
    ];
    let offset = 0;
    const header: Record<string, unknown> = {};
    for (const p of parts) (header[p.name] = { dtype: p.dtype, shape: p.shape, data_offsets: [offset, offset + p.bytes.length] }), (offset += p.bytes.length);
    const json = Buffer.from(JSON.stringify(header));
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(json.length));
    const dir = mkdtempSync(join(tmpdir(), 'weft-rows-'));
    try {
      const file = join(dir, 'model.safetensors');
      writeFileSync(file, Buffer.concat([length, json, ...parts.map((p) => p.bytes)]));
      const tensors = await readSafetensorsHeader(file);
      expect(Array.from((await readRows(tensors.get('b')!)).data)).toEqual(bf16Values.map((v) => Math.fround(v)));
      const half = await readRows(tensors.get('h')!, [2, 0]);
      expect([half.rows, half.cols]).toEqual([2, 2]);
      expect(Array.from(half.data)).toEqual([1, 0, 1.5, -2.25]);
      expect(Array.from((await readRows(tensors.get('h')!, [1])).data)).toEqual([2 ** -24, 65504]);
      expect(Array.from((await readRows(tensors.get('f')!, [1])).data)).toEqual([Math.fround(1e-7), 3]);
      await expect(readRows(tensors.get('f')!, [2])).rejects.toThrow(ModelLoadError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
