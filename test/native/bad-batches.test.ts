// Bad batches reject with a typed error, and the backend keeps working after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepBatch } from '../../src/backends/backend.js';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { loadNativeBinding, loadNativeBindingFrom } from '../../src/backends/cpu/native-binding.js';
import { BackendError, InvalidOptionError, NativeBackendUnavailableError } from '../../src/errors.js';
import { buildBatch, QWEN3_TINY } from './helpers.js';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NUM_BLOCKS = 8;
const BLOCK_SIZE = 4;

describe('CPU backend: bad batches', () => {
  let backend: CpuBackend;
  let good: StepBatch;
  let goodLogits: Float32Array;

  beforeAll(async () => {
    backend = await CpuBackend.load(QWEN3_TINY, { threads: 2 });
    await backend.allocateCache({ numBlocks: NUM_BLOCKS, blockSize: BLOCK_SIZE, precision: 'f32' });
    good = buildBatch([
      { tokens: [10, 11, 12, 13, 14], pastLen: 0, blocks: [3, 1] },
      { tokens: [20, 21], pastLen: 0, blocks: [2] },
    ]);
    goodLogits = (await backend.execute(good)).logits;
  });
  afterAll(async () => backend.dispose());

  const with_ = (patch: Partial<Record<keyof StepBatch, unknown>>): StepBatch => ({ ...good, ...patch }) as StepBatch;
  const i32 = (...v: number[]) => Int32Array.from(v);

  const cases: Array<[string, () => StepBatch, RegExp]> = [
    ['a block index >= numBlocks', () => with_({ blockIndices: i32(3, NUM_BLOCKS, 2) }), /blockIndices\[1\] = 8 is not a block/],
    ['a negative block index', () => with_({ blockIndices: i32(3, -1, 2) }), /blockIndices\[1\] = -1/],
    ['the null block in a table', () => with_({ blockIndices: i32(3, 0, 2) }), /blockIndices\[1\] = 0/],
    ['too few blocks for the tokens', () => with_({ blockIndices: i32(3, 2), blockIndicesBegins: i32(0, 1, 2) }), /needs 5 cache slots/],
    ['positions beyond the block table (pastLen)', () => with_({ pastLens: i32(4, 0), maxContextLen: 9 }), /needs 9 cache slots/],
    ['positions length != inputIds length', () => with_({ positions: i32(0, 1, 2) }), /positions has 3 entries/],
    ['an input id >= vocab', () => with_({ inputIds: i32(10, 11, 384, 13, 14, 20, 21) }), /inputIds\[2\] = 384 is outside the vocabulary/],
    ['a negative input id', () => with_({ inputIds: i32(10, 11, -5, 13, 14, 20, 21) }), /inputIds\[2\]/],
    ['a negative position', () => with_({ positions: i32(0, 1, -2, 3, 4, 0, 1) }), /positions\[2\] is negative/],
    ['subsequenceBegins not ending at T', () => with_({ subsequenceBegins: i32(0, 5, 6) }), /must end at 7/],
    ['subsequenceBegins of the wrong length', () => with_({ subsequenceBegins: i32(0, 7) }), /subsequenceBegins has 2 entries/],
    ['decreasing subsequenceBegins', () => with_({ subsequenceBegins: i32(0, 6, 5, 7), pastLens: i32(0, 0, 0), blockIndicesBegins: i32(0, 1, 2, 3) }), /smaller than the entry before/],
    ['blockIndicesBegins past the table', () => with_({ blockIndicesBegins: i32(0, 2, 4) }), /blockIndicesBegins must end at 3/],
    ['a negative pastLen', () => with_({ pastLens: i32(-1, 0) }), /pastLens\[0\] is negative/],
    ['a wrong maxContextLen', () => with_({ maxContextLen: 4 }), /maxContextLen is 4/],
    ['a logits index out of range', () => with_({ logitsIndices: i32(4, 7) }), /logitsIndices\[1\] = 7/],
    ['logits indices out of order', () => with_({ logitsIndices: i32(6, 4) }), /strictly ascending/],
    ['a block listed twice in one table', () => with_({ blockIndices: i32(3, 3, 2) }), /sequence 0 lists block 3 twice/],
    ['a huge pastLen over a repeated block', () => with_({ pastLens: i32(2 ** 30, 0), blockIndices: i32(...Array(2 ** 10).fill(3), 2), blockIndicesBegins: i32(0, 1024, 1025), maxContextLen: 2 ** 30 + 5 }), /needs 1073741829 cache slots/],
    ['two sequences writing one block', () => with_({ blockIndices: i32(3, 1, 3) }), /block 3 is written by sequences 0 and 1/],
    ['argmaxRows of the wrong length', () => with_({ argmaxRows: Uint8Array.of(1) }), /argmaxRows has 1 entries, logitsIndices has 2/],
    ['argmaxRows not a Uint8Array', () => with_({ argmaxRows: [1, 1] }), /argmaxRows must be a Uint8Array/],
    ['an odd blockCopies', () => with_({ blockCopies: i32(1) }), /pairs/],
    ['a blockCopies block out of range', () => with_({ blockCopies: i32(1, 99) }), /blockCopies\[1\] = 99/],
    ['an empty step', () => buildBatch([]), /no tokens/],
    ['a plain array instead of an Int32Array', () => with_({ inputIds: [10, 11, 12, 13, 14, 20, 21] }), /inputIds must be an Int32Array/],
    ['a Float32Array instead of an Int32Array', () => with_({ positions: new Float32Array(7) }), /positions must be an Int32Array/],
    ['a missing field', () => with_({ pastLens: undefined }), /pastLens must be an Int32Array/],
    ['a non-integer maxContextLen', () => with_({ maxContextLen: 5.5 }), /maxContextLen/],
  ];

  it.each(cases)('rejects %s with a BackendError', async (_, make, message) => {
    const result = backend.execute(make());
    await expect(result).rejects.toBeInstanceOf(BackendError);
    await expect(result).rejects.toThrow(message);
  });

  it('still computes the same logits after all those rejections', async () => {
    const { logits } = await backend.execute(good);
    expect(logits).toEqual(goodLogits);
  });

  it('queues concurrent execute calls and runs them one at a time', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => backend.execute(good)));
    for (const r of results) expect(r.logits).toEqual(goodLogits);
  });

  it('rejects an unknown KV cache precision and a cache too small, with typed errors', async () => {
    const other = await CpuBackend.load(QWEN3_TINY, { threads: 1 });
    try {
      await expect(other.allocateCache({ numBlocks: 4, blockSize: 4, precision: 'i4' as 'u8' })).rejects.toBeInstanceOf(InvalidOptionError);
      await expect(other.execute(good)).rejects.toThrow(/before allocateCache/);
      await expect(other.allocateCache({ numBlocks: 1, blockSize: 4, precision: 'f32' })).rejects.toThrow(/at least 2/);
      // 2^31 - 1 blocks of 4096 tokens: far beyond any machine's memory, refused without trying.
      await expect(other.allocateCache({ numBlocks: 2 ** 31 - 1, blockSize: 4096, precision: 'f32' })).rejects.toThrow(/too large|exceeds the physical memory/);
      await expect(other.allocateCache({ numBlocks: 2 ** 20, blockSize: 4096, precision: 'u8' })).rejects.toThrow(/too large|exceeds the physical memory/);
    } finally {
      await other.dispose();
    }
  });

  it('dispose is idempotent and later calls reject', async () => {
    const other = await CpuBackend.load(QWEN3_TINY, { threads: 1 });
    await other.allocateCache({ numBlocks: NUM_BLOCKS, blockSize: BLOCK_SIZE, precision: 'f32' });
    const pending = other.execute(good); // queued before dispose: completes
    await other.dispose();
    await other.dispose();
    expect((await pending).logits).toEqual(goodLogits);
    await expect(other.execute(good)).rejects.toBeInstanceOf(BackendError);
  });
});

describe('native CpuModel guards', () => {
  const config = {
    hidden: 8, layers: 1, heads: 2, kvHeads: 1, headDim: 4, intermediate: 16, vocab: 10, rmsEps: 1e-6,
    qkvBias: false, oBias: false, qkNorm: false, tiedEmbeddings: true, slidingWindow: 0, invFreq: new Float64Array([1, 0.01]), threads: 1,
  };

  it('rejects a second operation while one is running', async () => {
    const model = new (loadNativeBinding().CpuModel)(config);
    const first = model.allocateCache(4, 4, 'f32');
    await expect(model.allocateCache(4, 4, 'f32')).rejects.toThrow(/one step at a time/);
    await first;
    model.dispose();
  });

  it('a getter that starts another operation while arguments are read cannot run two at once', async () => {
    const model = new (loadNativeBinding().CpuModel)(config);
    let inner: Promise<void> | undefined;
    const shape: number[] = [];
    Object.defineProperty(shape, 0, {
      get() {
        inner = model.allocateCache(4, 4, 'f32');
        return 8;
      },
      enumerable: true,
    });
    await expect(model.loadTensor('norm', -1, '/nonexistent', 0, 'F32', shape)).rejects.toThrow(/one step at a time/);
    await inner;
    model.dispose();
  });

  it('a getter that disposes the model while loadTensor reads its shape gets a rejection, not a crash', async () => {
    const model = new (loadNativeBinding().CpuModel)(config);
    const shape: number[] = [8, 8];
    Object.defineProperty(shape, 1, {
      get() {
        model.dispose();
        return 8;
      },
      enumerable: true,
    });
    await expect(model.loadTensor('q_proj', 0, '/nonexistent', 0, 'F32', shape)).rejects.toThrow(/disposed/);
  });

  it('a getter that disposes the model while execute reads the batch gets a rejection, not a crash', async () => {
    const model = new (loadNativeBinding().CpuModel)(config);
    await model.allocateCache(4, 4, 'f32');
    const batch = { ...buildBatch([{ tokens: [1], pastLen: 0, blocks: [1] }]) };
    Object.defineProperty(batch, 'logitsIndices', {
      get() {
        model.dispose();
        return Int32Array.of(0);
      },
      enumerable: true,
    });
    await expect(model.execute(batch)).rejects.toThrow(/disposed/);
  });

  it('refuses to execute before every weight is loaded', async () => {
    const model = new (loadNativeBinding().CpuModel)(config);
    await model.allocateCache(4, 4, 'f32');
    await expect(model.execute(buildBatch([{ tokens: [1], pastLen: 0, blocks: [1] }]))).rejects.toThrow(/weights not loaded: embed_tokens/);
    model.dispose();
    model.dispose();
    await expect(model.allocateCache(4, 4, 'f32')).rejects.toThrow(/disposed/);
  });

  it('checks the config it is given', () => {
    const CpuModel = loadNativeBinding().CpuModel;
    expect(() => new CpuModel({ ...config, heads: 3, kvHeads: 2 })).toThrow(/multiple of kvHeads/);
    expect(() => new CpuModel({ ...config, headDim: 5 })).toThrow(/headDim/);
    expect(() => new CpuModel({ ...config, invFreq: new Float64Array(3) })).toThrow(/invFreq/);
    expect(() => new CpuModel({ ...config, hidden: -1 })).toThrow(/hidden/);
  });

  it('a matrix with one column wants a 2-D shape; vectors want a 1-D one', async () => {
    const narrow = { ...config, hidden: 1, heads: 1, headDim: 2, intermediate: 1, vocab: 4, invFreq: new Float64Array([1]) };
    const model = new (loadNativeBinding().CpuModel)(narrow);
    const file = join(mkdtempSync(join(tmpdir(), 'weft-native-')), 'weights.bin');
    writeFileSync(file, new Uint8Array(64));
    await expect(model.loadTensor('embed_tokens', -1, file, 0, 'F32', [4])).rejects.toThrow(/shape mismatch: expected \[4, 1\]/);
    await model.loadTensor('embed_tokens', -1, file, 0, 'F32', [4, 1]);
    await model.loadTensor('gate_proj', 0, file, 0, 'F16', [1, 1]);
    await expect(model.loadTensor('norm', -1, file, 0, 'F32', [1, 1])).rejects.toThrow(/shape mismatch: expected \[1\]$/);
    await model.loadTensor('norm', -1, file, 0, 'F32', [1]);
    model.dispose();
  });

  it('rejects loading a tensor into a slot the model does not have', async () => {
    const model = new (loadNativeBinding().CpuModel)(config);
    await expect(model.loadTensor('q_proj.bias', 0, '/nonexistent', 0, 'F32', [8])).rejects.toThrow(/no weight q_proj.bias/);
    await expect(model.loadTensor('q_proj', 5, '/nonexistent', 0, 'F32', [8, 8])).rejects.toThrow(/no weight q_proj in layer 5/);
    await expect(model.loadTensor('q_proj', 0, '/nonexistent', 0, 'F32', [8, 8])).rejects.toThrow(/cannot open/);
    await expect(model.loadTensor('q_proj', 0, '/nonexistent', 0, 'F32', [4, 8])).rejects.toThrow(/shape mismatch/);
    model.dispose();
  });
});

describe('native binding loader', () => {
  it('a missing addon gives NativeBackendUnavailableError with the rebuild command', () => {
    expect(() => loadNativeBindingFrom('/nonexistent/weft_native.node')).toThrow(NativeBackendUnavailableError);
    expect(() => loadNativeBindingFrom('/nonexistent/weft_native.node')).toThrow(/npm run build:native/);
  });

  it('a broken addon gives NativeBackendUnavailableError', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'weft-native-')), 'weft_native.node');
    writeFileSync(file, 'not a shared library');
    expect(() => loadNativeBindingFrom(file)).toThrow(NativeBackendUnavailableError);
  });
});
