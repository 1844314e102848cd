/**
 * BERT-family encoders on the CPU backend (test/fixtures/bert-embed-tiny, a
 * random-weight BertModel, and nomic-embed-tiny, a NomicBertModel: rotary,
 * SwiGLU, fused Wqkv; both with mean pooling + Normalize, made by
 * tools/embeddings/make_fixtures.py): weft's vectors against
 * sentence-transformers' one text at a time, batched into one step and from
 * concurrent calls; CLS and mean states unnormalised (what a cross-encoder's
 * head reads); token types of a pair; and the whole-sequence rule (E3): a
 * text is never split across steps, one too long for a step is refused by
 * index or truncated, and the backend refuses a step that would split one.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { Pipeline } from '../../src/create.js';
import { Engine, type FinishInfo } from '../../src/engine/engine.js';
import { KvCacheManager } from '../../src/engine/kv/kv-cache-manager.js';
import { GREEDY } from '../../src/sampling/params.js';
import { loadText } from '../../src/text/load-text.js';
import { ModelLoadError, PromptTooLongError, UnsupportedModelError } from '../../src/errors.js';
import { parseModelConfig } from '../../src/model-files/config.js';
import { buildBatch, readReference, REPO_ROOT } from '../native/helpers.js';
import { readAllTensors, writeSafetensors } from '../model-files/safetensors-writer.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'bert-embed-tiny');
const NOMIC_DIR = join(REPO_ROOT, 'test', 'fixtures', 'nomic-embed-tiny');
const XLMR_DIR = join(REPO_ROOT, 'test', 'fixtures', 'xlmr-embed-tiny');
interface Reference {
  texts: string[];
  token_ids: number[][];
  embeddings: number[][];
  embeddings_batched: number[][];
  mean_unnormalized: number[][];
  cls_unnormalized: number[][];
  pair: { token_ids: number[]; token_type_ids: number[]; cls_unnormalized: number[] };
}
const ref = readReference(DIR) as unknown as Reference;
/** `positions`: how many tokens a text may have; `around`: the tokens the tokenizer puts before and after a text. */
const FIXTURES = [
  { name: 'bert-embed-tiny (BertModel)', dir: DIR, ref, positions: 256, around: [2, 3] },
  { name: 'nomic-embed-tiny (NomicBertModel)', dir: NOMIC_DIR, ref: readReference(NOMIC_DIR) as unknown as Reference, positions: 256, around: [2, 3] },
  // Positions from padding_idx + 1 (130 rows, 128 positions), one token type, a Unigram tokenizer, <s> ... </s>.
  { name: 'xlmr-embed-tiny (XLMRobertaModel)', dir: XLMR_DIR, ref: readReference(XLMR_DIR) as unknown as Reference, positions: 128, around: [0, 2] },
];

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
function expectClose(got: readonly ArrayLike<number>[], want: readonly number[][]): void {
  expect(got).toHaveLength(want.length);
  got.forEach((v, i) => {
    expect(maxDiff(v, want[i]!), `text ${i}`).toBeLessThan(1e-4);
    expect(cosine(v, want[i]!), `text ${i}`).toBeGreaterThanOrEqual(0.99999);
  });
}

describe.each(FIXTURES)('$name through pipe.embed()', ({ dir, ref, positions, around }) => {
  let pipe: Pipeline;
  const steps: number[] = [];
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: dir, threads: 2 });
    pipe.on('step', (info: { scheduledTokens: number }) => steps.push(info.scheduledTokens));
  });
  afterAll(async () => pipe.close());

  it('tokenizes as sentence-transformers does ([CLS] ... [SEP], or <s> ... </s>)', () => {
    ref.texts.forEach((text, i) => expect(pipe.tokenizer.encode(text)).toEqual(ref.token_ids[i]));
  });

  it("equals sentence-transformers' encode() one text at a time", async () => {
    for (const [i, text] of ref.texts.entries()) expectClose((await pipe.embed(text)).embeddings, [ref.embeddings[i]!]);
  });

  it('batched: all texts in one step give the padded batch of sentence-transformers, and the texts alone', async () => {
    steps.length = 0;
    const { embeddings, usage } = await pipe.embed(ref.texts);
    const total = ref.token_ids.reduce((sum, ids) => sum + ids.length, 0);
    expect(usage.promptTokens).toBe(total);
    expect(steps).toEqual([total]); // one step computed every text
    expectClose(embeddings, ref.embeddings_batched);
    expectClose(embeddings, ref.embeddings);
  });

  it('concurrent embed() calls share steps and each gets its own vectors', async () => {
    const order = [3, 0, 5, 1, 4, 2];
    const results = await Promise.all(order.map((i) => pipe.embed([ref.texts[i]!, ref.texts[(i + 1) % 6]!])));
    results.forEach((r, k) => expectClose(r.embeddings, [ref.embeddings[order[k]!]!, ref.embeddings[(order[k]! + 1) % 6]!]));
  });

  it('normalize: false gives the mean of the last layer states; CLS pooling the first token\'s', async () => {
    expectClose((await pipe.embed(ref.texts, { normalize: false })).embeddings, ref.mean_unnormalized);
    const cls = await Pipeline.create({ model: dir, threads: 2, embedding: { pooling: 'cls', normalize: false } });
    try {
      expectClose((await cls.embed(ref.texts)).embeddings, ref.cls_unnormalized);
    } finally {
      await cls.close();
    }
  });

  it('a text longer than the model has positions is a PromptTooLongError naming it, or truncated when asked', async () => {
    const long = 'hello world '.repeat(200); // more tokens than the model has positions
    const count = pipe.tokenizer.encode(long).length;
    expect(count).toBeGreaterThan(positions);
    await expect(pipe.embed(['hello', long])).rejects.toThrow(PromptTooLongError);
    await expect(pipe.embed(['hello', long])).rejects.toThrow(new RegExp(`input\\[1\\] has ${count} tokens; the model's context holds ${positions}`));
    const { embeddings, usage } = await pipe.embed(['hello', long], { truncate: true });
    expect(usage.promptTokens).toBe(ref.token_ids[1]!.length + positions);
    expectClose([embeddings[0]!], [ref.embeddings[1]!]);
    // Truncation kept the special tokens around the text: the same as the first words' tokens between them.
    const cut = [around[0]!, ...pipe.tokenizer.encode(long, { addSpecialTokens: false }).slice(0, positions - 2), around[1]!];
    expectClose([embeddings[1]!], [Array.from((await pipe.embed([cut])).embeddings[0]!)]);
  });

  it("reads no more than the folder's max_seq_length (sentence_bert_config.json), as sentence-transformers does", async () => {
    const limited = mkdtempSync(join(tmpdir(), 'weft-max-seq-'));
    cpSync(dir, limited, { recursive: true });
    writeFileSync(join(limited, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: 12, do_lower_case: false }));
    const short = await Pipeline.create({ model: limited, threads: 2 });
    try {
      const text = 'hello world '.repeat(8); // more than 12 tokens
      const count = short.tokenizer.encode(text).length;
      expect(count).toBeGreaterThan(12);
      await expect(short.embed(['hello', text])).rejects.toThrow(new RegExp(`input\\[1\\] has ${count} tokens; the model reads at most 12 \\(its max_seq_length\\)`));
      const { embeddings } = await short.embed(text, { truncate: true });
      const cut = [around[0]!, ...short.tokenizer.encode(text, { addSpecialTokens: false }).slice(0, 10), around[1]!];
      expectClose([embeddings[0]!], [Array.from((await pipe.embed([cut])).embeddings[0]!)]);
      await expect(pipe.embed(text)).resolves.toBeDefined(); // the folder without it reads them all
    } finally {
      await short.close();
      rmSync(limited, { recursive: true, force: true });
    }
  });

  it('reads the same tensors under a task model\'s prefix (bert. / roberta.)', async () => {
    const prefixed = mkdtempSync(join(tmpdir(), 'weft-prefixed-'));
    cpSync(dir, prefixed, { recursive: true });
    const prefix = dir === XLMR_DIR ? 'roberta.' : 'bert.';
    const tensors = await readAllTensors(join(dir, 'model.safetensors'));
    writeSafetensors(join(prefixed, 'model.safetensors'), tensors.map((t) => ({ ...t, name: `${prefix}${t.name}` })));
    try {
      await using again = await Pipeline.create({ model: prefixed, threads: 1 });
      expectClose((await again.embed(ref.texts)).embeddings, ref.embeddings);
    } finally {
      rmSync(prefixed, { recursive: true, force: true });
    }
  });

  it('takes no prefix-cache hit: the same long text twice, pooled by its last token, gives the same vector', async () => {
    const last = await Pipeline.create({ model: dir, threads: 2, embedding: { pooling: 'last', normalize: false } });
    try {
      const text = ref.texts[3]!; // 94 tokens: five full 16-token blocks a decoder would reuse
      const first = (await last.embed(text)).embeddings[0]!;
      const again = (await last.embed(text)).embeddings[0]!; // a hit would be a pastLen the native step refuses
      expect(Array.from(again)).toEqual(Array.from(first));
      const mean = (await pipe.embed(text, { normalize: false })).embeddings[0]!;
      expect(maxDiff(first, mean)).toBeGreaterThan(1e-3); // it is the last token's state, not the mean
    } finally {
      await last.close();
    }
  });

  it('does not generate: an encoder has no LM head', async () => {
    await expect(pipe.generate('hello')).rejects.toThrow(UnsupportedModelError);
    expect(() => pipe.stream('hello')).toThrow(/BertModel/);
  });
});

describe('the whole-sequence rule with a small step budget (E3)', () => {
  let pipe: Pipeline;
  const steps: number[] = [];
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: DIR, threads: 2, scheduler: { maxNumBatchedTokens: 20 } });
    pipe.on('step', (info: { scheduledTokens: number }) => steps.push(info.scheduledTokens));
  });
  afterAll(async () => pipe.close());

  it('texts that fit a step are never split: each waits for a step with room for all of it', async () => {
    const fitting = ref.texts.map((_, i) => i).filter((i) => ref.token_ids[i]!.length <= 20);
    expect(fitting.length).toBeGreaterThan(2);
    const { embeddings } = await pipe.embed(fitting.map((i) => ref.texts[i]!));
    expectClose(embeddings, fitting.map((i) => ref.embeddings[i]!));
    // Every step's tokens are whole texts: a sum of some of the texts' lengths, never more than the budget.
    for (const n of steps) expect(n).toBeLessThanOrEqual(20);
    expect(steps.reduce((a, b) => a + b, 0)).toBe(fitting.reduce((sum, i) => sum + ref.token_ids[i]!.length, 0));
    expect(steps.length).toBeGreaterThan(1);
  });

  it('a text longer than one step is a PromptTooLongError naming its index, and another call is unharmed', async () => {
    const longIndex = ref.token_ids.findIndex((ids) => ids.length > 20);
    const failing = pipe.embed(['hello', ref.texts[longIndex]!]);
    const fine = pipe.embed('hello');
    await expect(failing).rejects.toThrow(PromptTooLongError);
    await expect(failing).rejects.toThrow(/input\[1\] has \d+ tokens; the model's context holds 20/);
    expectClose((await fine).embeddings, [ref.embeddings[1]!]);
    const cut = await pipe.embed(ref.texts[longIndex]!, { truncate: true });
    expect(cut.usage.promptTokens).toBe(20);
  });
});

describe('the CPU backend running an encoder step directly', () => {
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.load(DIR, { threads: 2 });
    await backend.allocateCache({ numBlocks: 32, blockSize: 16, precision: 'f32' });
  });
  afterAll(async () => backend.dispose());

  it('says it computes whole sequences and has a hidden state', () => {
    expect(backend.shape.wholeSequences).toBe(true);
    expect(backend.shape.hiddenSize).toBe(32);
  });

  it('returns the CLS state of every sequence in a batch, unnormalised', async () => {
    const lengths = ref.token_ids.map((ids) => ids.length);
    let next = 1;
    const seqs = ref.token_ids.map((tokens) => {
      const blocks = Array.from({ length: Math.ceil(tokens.length / 16) }, () => next++);
      return { tokens, pastLen: 0, blocks, logits: 'none' as const };
    });
    const batch = buildBatch(seqs);
    const starts = lengths.map((_, i) => lengths.slice(0, i).reduce((a, b) => a + b, 0));
    const result = await backend.execute({ ...batch, hiddenIndices: Int32Array.from(starts) });
    expect(result.logits).toHaveLength(0);
    expectClose(ref.cls_unnormalized.map((_, i) => result.hidden!.subarray(i * 32, (i + 1) * 32)), ref.cls_unnormalized);
  });

  it('reads token types: a pair with tokenTypeIds gives transformers\' CLS state, and without them another', async () => {
    const { token_ids, token_type_ids, cls_unnormalized } = ref.pair;
    const batch = buildBatch([{ tokens: token_ids, pastLen: 0, blocks: [1, 2, 3], logits: 'none' }]);
    const typed = await backend.execute({ ...batch, hiddenIndices: Int32Array.of(0), tokenTypeIds: Int32Array.from(token_type_ids) });
    expectClose([typed.hidden!], [cls_unnormalized]);
    const untyped = await backend.execute({ ...batch, hiddenIndices: Int32Array.of(0) });
    expect(maxDiff(untyped.hidden!, cls_unnormalized)).toBeGreaterThan(1e-3);
  });

  it('refuses a step that would split a sequence, ask for logits, or name a position or token type it lacks', async () => {
    const tokens = ref.token_ids[0]!;
    const split = buildBatch([{ tokens: tokens.slice(4), pastLen: 4, blocks: [1], logits: 'none' }]);
    await expect(backend.execute(split)).rejects.toThrow(/pastLens\[0\] = 4: an encoder attends both ways/);
    await expect(backend.execute(buildBatch([{ tokens, pastLen: 0, blocks: [1] }]))).rejects.toThrow(/no LM head/);
    const base = buildBatch([{ tokens, pastLen: 0, blocks: [1], logits: 'none' }]);
    await expect(backend.execute({ ...base, tokenTypeIds: new Int32Array(tokens.length).fill(2) })).rejects.toThrow(/not a token type in \[0, 2\)/);
    await expect(backend.execute({ ...base, tokenTypeIds: Int32Array.of(0) })).rejects.toThrow(/tokenTypeIds has 1 entries/);
    const far = { ...base, positions: base.positions.map((p) => p + 250) };
    await expect(backend.execute(far)).rejects.toThrow(/past the model's 256 position embeddings/);
    // The model still runs after every refusal.
    const ok = await backend.execute({ ...base, hiddenIndices: Int32Array.of(0) });
    expectClose([ok.hidden!], [ref.cls_unnormalized[0]!]);
  });
});

describe.each(FIXTURES)('$name loaded other ways', ({ dir, ref }) => {
  async function vectors(options: { mmap?: boolean; quantize?: 'q8_0' }): Promise<Float32Array[]> {
    const pipe = await Pipeline.create({ model: dir, threads: 2, ...(options.mmap !== undefined && { mmap: options.mmap }), ...(options.quantize && { quantize: options.quantize }) });
    try {
      return (await pipe.embed(ref.texts)).embeddings;
    } finally {
      await pipe.close();
    }
  }

  it('mapped from the file or read into memory: the same vectors', async () => {
    const mapped = await vectors({ mmap: true });
    const read = await vectors({ mmap: false });
    mapped.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(read[i]!)));
    expectClose(read, ref.embeddings);
  });

  it('quantized to q8_0 at load: close to the float vectors (the position and type tables stay float)', async () => {
    const q8 = await vectors({ quantize: 'q8_0' });
    q8.forEach((v, i) => expect(cosine(v, ref.embeddings[i]!), `text ${i}`).toBeGreaterThan(0.995));
  });
});

describe('token types through the engine (a text pair, as a cross-encoder reads it)', () => {
  let backend: CpuBackend;
  let engine: Engine;
  beforeAll(async () => {
    backend = await CpuBackend.load(DIR, { threads: 2 });
    const kv = new KvCacheManager([{ name: 'attention', blockSize: 16, numBlocks: 64 }], { prefixCaching: true });
    await backend.allocateCache({ numBlocks: 64, blockSize: 16, precision: 'f32' });
    const { tokenizer } = await loadText(DIR);
    engine = new Engine({ backend, kv, scheduler: { maxNumSeqs: 8, maxNumBatchedTokens: 256, policy: 'fcfs' }, decoder: tokenizer, eosTokenIds: [] });
  });
  afterAll(async () => backend.dispose());

  function embedCls(promptTokenIds: readonly number[], tokenTypeIds?: readonly number[]) {
    let finish!: (info: FinishInfo) => void;
    const finished = new Promise<FinishInfo>((resolve) => (finish = resolve));
    const added = engine.add(
      {
        promptTokenIds,
        sampling: GREEDY,
        stop: { maxTokens: 1, stopTokenIds: [], stopStrings: [], ignoreEos: true },
        priority: 0,
        embedding: { pooling: 'cls', ...(tokenTypeIds && { tokenTypeIds }) },
      },
      { onDelta: () => {}, onFinish: finish },
    );
    return { added, finished };
  }

  it("a pair's CLS state equals transformers' with its token types, beside a text without them in the same step", async () => {
    const pair = embedCls(ref.pair.token_ids, ref.pair.token_type_ids);
    const plain = embedCls(ref.token_ids[0]!);
    const [a, b] = await Promise.all([pair.finished, plain.finished]);
    expect(a.reason).toBe('stop');
    expectClose([a.embedding!], [ref.pair.cls_unnormalized]);
    expectClose([b.embedding!], [ref.cls_unnormalized[0]!]);
  });

  it('refuses token types of the wrong length or range when added, and the other requests run', async () => {
    const short = embedCls(ref.pair.token_ids, [0, 1]);
    expect(short.added.ok).toBe(false);
    expect(!short.added.ok && short.added.error.message).toMatch(/tokenTypeIds has 2 entries for 35 prompt tokens/);
    const range = embedCls(ref.pair.token_ids, ref.pair.token_type_ids.map(() => 2));
    expect(!range.added.ok && range.added.error.message).toMatch(/tokenTypeIds\[0\] = 2 is not a token type in \[0, 2\)/);
    const fine = embedCls(ref.token_ids[1]!);
    expectClose([(await fine.finished).embedding!], [ref.cls_unnormalized[1]!]);
  });

  it('a decoder takes no token types: refused when added', async () => {
    const dir = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-embed-tiny');
    const decoder = await CpuBackend.load(dir, { threads: 1 });
    try {
      await decoder.allocateCache({ numBlocks: 8, blockSize: 16, precision: 'f32' });
      const kv = new KvCacheManager([{ name: 'attention', blockSize: 16, numBlocks: 8 }], { prefixCaching: false });
      const { tokenizer } = await loadText(dir);
      const other = new Engine({ backend: decoder, kv, scheduler: { maxNumSeqs: 2, maxNumBatchedTokens: 64, policy: 'fcfs' }, decoder: tokenizer, eosTokenIds: [] });
      const added = other.add(
        { promptTokenIds: [1, 2, 3], sampling: GREEDY, stop: { maxTokens: 1, stopTokenIds: [], stopStrings: [], ignoreEos: true }, priority: 0,
          embedding: { pooling: 'last', tokenTypeIds: [0, 0, 0] } },
        { onDelta: () => {}, onFinish: () => {} },
      );
      expect(!added.ok && added.error).toMatchObject({ kind: 'CannotEmbed', message: expect.stringMatching(/takes no token types/) });
      expect(decoder.shape.tokenTypes).toBeUndefined();
      expect(decoder.shape.wholeSequences).toBeUndefined();
    } finally {
      await decoder.dispose();
    }
  });
});

describe('encoder configs', () => {
  const bert = {
    architectures: ['BertModel'], model_type: 'bert', hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4,
    intermediate_size: 64, vocab_size: 100, max_position_embeddings: 64, type_vocab_size: 2, layer_norm_eps: 1e-12, hidden_act: 'gelu',
  };

  it('reads a BertModel config, gelu and its tanh forms', () => {
    const config = parseModelConfig(bert);
    expect(config.architecture).toBe('BertModel');
    expect(config.encoder).toEqual({ typeVocabSize: 2, layerNormEps: 1e-12, activation: 'gelu', positions: 'absolute', mlpBias: true, positionOffset: 0 });
    expect(config.baseModel).toBe(true);
    expect(parseModelConfig({ ...bert, hidden_act: 'gelu_new' }).encoder?.activation).toBe('gelu_tanh');
    expect(parseModelConfig({ ...bert, architectures: undefined, hidden_act: 'gelu_pytorch_tanh' }).encoder?.activation).toBe('gelu_tanh');
  });

  it('refuses what the encoder does not compute, by name', () => {
    expect(() => parseModelConfig({ ...bert, hidden_act: 'relu' })).toThrow(/activation "relu" is not supported for BertModel \(gelu, gelu_new, gelu_pytorch_tanh\)/);
    expect(() => parseModelConfig({ ...bert, position_embedding_type: 'relative_key' })).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig({ ...bert, is_decoder: true })).toThrow(/is_decoder is not supported/);
    expect(() => parseModelConfig({ ...bert, architectures: ['NewModel'] })).toThrow(/GTE's NewModel .* not supported yet/);
    expect(() => parseModelConfig({ ...bert, architectures: ['ModernBertModel'] })).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig({ ...bert, num_attention_heads: 5 })).toThrow(ModelLoadError);
  });

  it('reads (XLM-)RoBERTa: positions from padding_idx + 1, so two rows fewer positions than the table', () => {
    const xlmr = { ...bert, architectures: ['XLMRobertaModel'], model_type: 'xlm-roberta', pad_token_id: 1, max_position_embeddings: 514, type_vocab_size: 1 };
    expect(parseModelConfig(xlmr)).toMatchObject({ architecture: 'XLMRobertaModel', maxPositionEmbeddings: 512, encoder: { positionOffset: 2, typeVocabSize: 1 } });
    expect(parseModelConfig({ ...xlmr, architectures: undefined, model_type: 'roberta', pad_token_id: 0 })).toMatchObject({ architecture: 'RobertaModel', maxPositionEmbeddings: 513, encoder: { positionOffset: 1 } });
    expect(() => parseModelConfig({ ...xlmr, max_position_embeddings: 2 })).toThrow(/leaves no position after the 2 rows before padding_idx \+ 1/);
    expect(() => parseModelConfig({ ...xlmr, pad_token_id: -1 })).toThrow(/"pad_token_id" must be a non-negative integer/);
  });

  // nomic-embed-text-v1.5's config.json as published (remote-code names), trimmed to what is read.
  const publishedNomic = {
    architectures: ['NomicBertModel'], model_type: 'nomic_bert', activation_function: 'swiglu', n_embd: 768, n_head: 12,
    n_inner: 3072, n_layer: 12, n_positions: 8192, layer_norm_epsilon: 1e-12, rotary_emb_base: 1000, rotary_emb_fraction: 1.0,
    rotary_emb_interleaved: false, rotary_scaling_factor: null, qkv_proj_bias: false, mlp_fc1_bias: false, mlp_fc2_bias: false,
    prenorm: false, causal: false, type_vocab_size: 2, vocab_size: 30528,
  };

  it("reads NomicBertModel in transformers 5's names and in the published remote-code names", () => {
    const config = parseModelConfig(publishedNomic);
    expect(config).toMatchObject({ architecture: 'NomicBertModel', hiddenSize: 768, numLayers: 12, numHeads: 12, headDim: 64, intermediateSize: 3072,
      maxPositionEmbeddings: 8192, ropeTheta: 1000, qkvBias: false, oBias: false, baseModel: true });
    expect(config.encoder).toEqual({ typeVocabSize: 2, layerNormEps: 1e-12, activation: 'swiglu', positions: 'rotary', mlpBias: false, positionOffset: 0 });
    const fixture = parseModelConfig(JSON.parse(readFileSync(join(NOMIC_DIR, 'config.json'), 'utf8')));
    expect(fixture).toMatchObject({ architecture: 'NomicBertModel', hiddenSize: 32, ropeTheta: 1000, maxPositionEmbeddings: 256 });
    expect(fixture.encoder?.positions).toBe('rotary');
  });

  it('refuses the NomicBert variants the encoder does not compute, by name', () => {
    for (const [key, value, message] of [
      ['rotary_emb_interleaved', true, /rotary_emb_interleaved is not supported for NomicBertModel/],
      ['qkv_proj_bias', true, /qkv_proj_bias/],
      ['prenorm', true, /prenorm/],
      ['rotary_emb_fraction', 0.5, /rotary_emb_fraction 0.5/],
      ['rotary_scaling_factor', 2, /dynamic NTK/],
      ['moe_every_n_layers', 2, /mixture of experts/],
      ['activation_function', 'gelu', /activation "gelu"/],
    ] as const)
      expect(() => parseModelConfig({ ...publishedNomic, [key]: value }), key).toThrow(message);
  });
});
