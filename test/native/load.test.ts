// Loading models: typed errors for broken folders, an already-loaded backend
// unaffected by them, F16/BF16/sharded weights, progress, and memory.
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type LoadProgress } from '../../src/backends/cpu/index.js';
import { ModelLoadError, UnsupportedModelError } from '../../src/errors.js';
import { readAllTensors, floatToHalfTruncated, halfToFloat, type RawTensor, writeSafetensors, encodeSafetensors } from '../model-files/safetensors-writer.js';
import { buildBatch, QWEN3_TINY, readReference } from './helpers.js';

const reference = readReference(QWEN3_TINY);
const prompt = (reference.cases[2] as { prompt_ids: number[] }).prompt_ids;
const batch = buildBatch([{ tokens: prompt, pastLen: 0, blocks: [1, 2], logits: 'all' }]);
const tmp = () => mkdtempSync(join(tmpdir(), 'weft-load-'));

/** A copy of qwen3-tiny whose tensors (and config) may be changed. */
async function variant(edit: {
  tensors?: (t: RawTensor[]) => RawTensor[];
  header?: (h: Record<string, any>) => void;
  config?: (c: Record<string, any>) => void;
  configText?: string;
}): Promise<string> {
  const dir = tmp();
  cpSync(join(QWEN3_TINY, 'config.json'), join(dir, 'config.json'));
  const tensors = await readAllTensors(join(QWEN3_TINY, 'model.safetensors'));
  writeSafetensors(join(dir, 'model.safetensors'), edit.tensors ? edit.tensors(tensors) : tensors, edit.header);
  if (edit.config) {
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    edit.config(config);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  }
  if (edit.configText !== undefined) writeFileSync(join(dir, 'config.json'), edit.configText);
  return dir;
}

async function logitsOf(dir: string): Promise<Float32Array> {
  const backend = await CpuBackend.load(dir, { threads: 2 });
  try {
    await backend.allocateCache({ numBlocks: 4, blockSize: 16, precision: 'f32' });
    return (await backend.execute(batch)).logits;
  } finally {
    await backend.dispose();
  }
}

const mapFloats = (t: RawTensor, dtype: string, encode: (f: number) => number): RawTensor => {
  const floats = new Float32Array(t.data.slice().buffer);
  return { ...t, dtype, data: new Uint8Array(Uint16Array.from(floats, encode).buffer) };
};

describe('CPU backend: loading', () => {
  let served: CpuBackend;
  let servedLogits: Float32Array;
  beforeAll(async () => {
    served = await CpuBackend.load(QWEN3_TINY, { threads: 2 });
    await served.allocateCache({ numBlocks: 4, blockSize: 16, precision: 'f32' });
    servedLogits = (await served.execute(batch)).logits;
  });
  afterAll(async () => served.dispose());

  const broken: Array<[string, () => Promise<string>, new (...args: any[]) => Error, RegExp]> = [
    ['a truncated safetensors file', async () => {
      const dir = await variant({});
      const file = join(dir, 'model.safetensors');
      const bytes = readFileSync(file);
      writeFileSync(file, bytes.subarray(0, bytes.length - 100));
      return dir;
    }, ModelLoadError, /model\.safetensors \(tensor .+\): .*truncated/],
    ['a header whose offsets lie', () => variant({ header: (h) => { h['model.norm.weight'].data_offsets = [10_000_000, 10_000_256]; } }), ModelLoadError, /tensor model\.norm\.weight/],
    ['a wrong dtype', () => variant({ tensors: (ts) => ts.map((t) => (t.name === 'model.layers.1.mlp.up_proj.weight' ? { ...t, dtype: 'I32' } : t)) }), ModelLoadError, /model\.layers\.1\.mlp\.up_proj\.weight.*dtype I32/],
    ['a wrong shape', () => variant({ tensors: (ts) => ts.map((t) => (t.name === 'model.layers.0.self_attn.q_norm.weight' ? { ...t, shape: [8, 4] } : t)) }), ModelLoadError, /q_norm\.weight.*shape \[8,4\], expected \[32\]/],
    ['a missing tensor', () => variant({ tensors: (ts) => ts.filter((t) => t.name !== 'lm_head.weight') }), ModelLoadError, /lm_head\.weight is missing/],
    ['invalid config JSON', () => variant({ configText: '{"architectures": [' }), ModelLoadError, /config\.json is not valid JSON/],
    ['an unsupported architecture', () => variant({ config: (c) => { c.architectures = ['MambaForCausalLM']; } }), UnsupportedModelError, /MambaForCausalLM/],
    ['a config that disagrees with the weights', () => variant({ config: (c) => { c.head_dim = 16; } }), ModelLoadError, /q_proj\.weight.*expected \[64,64\]/],
  ];

  it.each(broken)('%s is a typed error, and the loaded backend keeps serving', async (_, make, type, message) => {
    const dir = await make();
    const result = CpuBackend.load(dir, { threads: 1 });
    await expect(result).rejects.toBeInstanceOf(type);
    await expect(result).rejects.toThrow(message);
    expect((await served.execute(batch)).logits).toEqual(servedLogits);
    rmSync(dir, { recursive: true });
  });

  it('F16 weights load as the exact float values', async () => {
    // Round every weight to a half; the F32 file holds the same values exactly.
    const toHalf = (ts: RawTensor[]) => ts.map((t) => mapFloats(t, 'F16', floatToHalfTruncated));
    const asF32 = (ts: RawTensor[]) => toHalf(ts).map((t) => ({ ...t, dtype: 'F32', data: new Uint8Array(Float32Array.from(new Uint16Array(t.data.slice().buffer), halfToFloat).buffer) }));
    const [half, full] = [await variant({ tensors: toHalf }), await variant({ tensors: asF32 })];
    const logits = await logitsOf(half);
    expect(logits).toEqual(await logitsOf(full));
    expect(logits).not.toEqual(servedLogits); // the rounding did change the model
  });

  it('BF16 weights load as the exact float values', async () => {
    const top = (f: number) => (new Uint32Array(Float32Array.of(f).buffer)[0] as number) >>> 16;
    const toBf16 = (ts: RawTensor[]) => ts.map((t) => mapFloats(t, 'BF16', top));
    const asF32 = (ts: RawTensor[]) => toBf16(ts).map((t) => ({ ...t, dtype: 'F32', data: new Uint8Array(new Uint32Array(Uint32Array.from(new Uint16Array(t.data.slice().buffer), (h) => h << 16).buffer).buffer) }));
    const [bf16, full] = [await variant({ tensors: toBf16 }), await variant({ tensors: asF32 })];
    expect(await logitsOf(bf16)).toEqual(await logitsOf(full));
  });

  it('a sharded model gives the same logits as the single file', async () => {
    const dir = tmp();
    cpSync(join(QWEN3_TINY, 'config.json'), join(dir, 'config.json'));
    const tensors = await readAllTensors(join(QWEN3_TINY, 'model.safetensors'));
    const shards = [tensors.filter((_, i) => i % 2 === 0), tensors.filter((_, i) => i % 2 === 1)];
    const weightMap: Record<string, string> = {};
    shards.forEach((ts, s) => {
      const name = `model-0000${s + 1}-of-00002.safetensors`;
      writeSafetensors(join(dir, name), ts);
      for (const t of ts) weightMap[t.name] = name;
    });
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
    expect(await logitsOf(dir)).toEqual(servedLogits);
  });

  it('reports progress from config to done, with byte counts that add up', async () => {
    const events: LoadProgress[] = [];
    const backend = await CpuBackend.load(QWEN3_TINY, { threads: 1, onProgress: (p) => events.push(p) });
    await backend.dispose();
    expect(events[0]?.phase).toBe('config');
    const last = events[events.length - 1] as LoadProgress;
    expect(last.phase).toBe('done');
    expect(last.loaded).toBe(last.total);
    expect(last.total).toBeGreaterThan(500_000);
    const weights = events.filter((e) => e.phase === 'weights');
    for (let i = 1; i < weights.length; i++) expect((weights[i] as LoadProgress).loaded).toBeGreaterThanOrEqual((weights[i - 1] as LoadProgress).loaded);
  });

  it.each([['F32', 4], ['F16', 2]] as const)('%s weights go to native memory (about the file size), not the JS heap', async (dtype, bytesPer) => {
    // A 72 MB (F32) or 36 MB (F16) model, mostly a 32768 x 512 embedding, written in chunks.
    const dir = tmp();
    const hidden = 512, vocab = 32768, inter = 512;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({
      architectures: ['LlamaForCausalLM'], hidden_size: hidden, intermediate_size: inter, num_hidden_layers: 1,
      num_attention_heads: 8, num_key_value_heads: 8, vocab_size: vocab, max_position_embeddings: 64, tie_word_embeddings: true,
    }));
    const layer = 'model.layers.0.';
    const specs: Array<[string, number[]]> = [
      ['model.embed_tokens.weight', [vocab, hidden]], ['model.norm.weight', [hidden]],
      [`${layer}input_layernorm.weight`, [hidden]], [`${layer}post_attention_layernorm.weight`, [hidden]],
      ...['q', 'k', 'v', 'o'].map((p): [string, number[]] => [`${layer}self_attn.${p}_proj.weight`, [hidden, hidden]]),
      [`${layer}mlp.gate_proj.weight`, [inter, hidden]], [`${layer}mlp.up_proj.weight`, [inter, hidden]], [`${layer}mlp.down_proj.weight`, [hidden, inter]],
    ];
    // Header from empty stand-ins with the right byte sizes, then the data in 1 MB chunks.
    const header = encodeSafetensors(specs.map(([name, shape]) => ({ name, dtype, shape, data: new Uint8Array(0) })), (h) => {
      let offset = 0;
      for (const [name, shape] of specs) {
        const bytes = shape.reduce((a, b) => a * b, bytesPer);
        h[name].data_offsets = [offset, offset + bytes];
        offset += bytes;
      }
    });
    const file = join(dir, 'model.safetensors');
    const fd = openSync(file, 'w');
    writeSync(fd, header);
    const chunk = dtype === 'F32' ? new Float32Array(1 << 18).fill(0.01) : new Uint16Array(1 << 19).fill(0x211f); // 0.01
    const total = specs.reduce((sum, [, shape]) => sum + shape.reduce((a, b) => a * b, bytesPer), 0);
    for (let written = 0; written < total; written += chunk.byteLength)
      writeSync(fd, new Uint8Array(chunk.buffer, 0, Math.min(chunk.byteLength, total - written)));
    closeSync(fd);

    const before = process.memoryUsage();
    const backend = await CpuBackend.load(dir, { threads: 1 });
    const after = process.memoryUsage();
    try {
      const jsGrowth = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
      expect(jsGrowth).toBeLessThan(16 * 1024 * 1024);
      expect(after.rss - before.rss).toBeGreaterThan(0.8 * total);
      expect(after.rss - before.rss).toBeLessThan(1.4 * total); // 16-bit matrices stay 16-bit
      await backend.allocateCache({ numBlocks: 2, blockSize: 16, precision: 'f32' });
      const out = await backend.execute(buildBatch([{ tokens: [1, 2, 3], pastLen: 0, blocks: [1] }]));
      expect(out.logits.length).toBe(vocab);
    } finally {
      await backend.dispose();
      rmSync(dir, { recursive: true });
    }
  });
});

describe('native tensor reads are bounds-checked', () => {
  it('an offset past the end of the file is refused by the native side too', async () => {
    const { loadNativeBinding } = await import('../../src/backends/cpu/native-binding.js');
    const model = new (loadNativeBinding().CpuModel)({
      hidden: 8, layers: 1, heads: 2, kvHeads: 1, headDim: 4, intermediate: 16, vocab: 10, rmsEps: 1e-6,
      qkvBias: false, oBias: false, qkNorm: false, tiedEmbeddings: true, slidingWindow: 0, invFreq: new Float64Array([1, 0.01]), threads: 1,
    });
    const file = join(tmp(), 'small.bin');
    writeFileSync(file, Buffer.alloc(100));
    await expect(model.loadTensor('norm', -1, file, 80, 'F32', [8])).rejects.toThrow(/lies outside the file/);
    await expect(model.loadTensor('norm', -1, file, 2 ** 53 - 1, 'F32', [8])).rejects.toThrow(/lies outside the file/);
    await expect(model.loadTensor('norm', -1, file, 0, 'I8', [8])).rejects.toThrow(/unsupported dtype/);
    await model.loadTensor('norm', -1, file, 68, 'F32', [8]);
    model.dispose();
  });
});
