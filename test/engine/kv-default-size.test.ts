// The KV cache budget when the user sets none (src/engine/kv/sizing.ts defaultKvBytes),
// and the precision: the backend's default, else f32.
import { describe, expect, it } from 'vitest';
import type { ModelShape } from '../../src/backends/backend.js';
import { DEFAULT_KV_MIN_BYTES, defaultKvBytes, kvBytesPerBlock, planPools } from '../../src/engine/kv/sizing.js';
import { Pipeline } from '../../src/create.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';

const shape: ModelShape = { vocabSize: 100, numLayers: 4, numKvHeads: 2, headDim: 64, maxContextLength: 4096 };
const GiB = 2 ** 30;

describe('the default KV cache size', () => {
  it('holds maxNumSeqs requests at the full context when a quarter of the available memory allows', () => {
    const bytes = defaultKvBytes(shape, 'f16', 16, 8, 64 * GiB);
    const specs = planPools(shape, bytes, 'f16', 16, 8);
    expect(specs[0]!.numBlocks).toBe(8 * (4096 / 16) + 1); // every request's context, and the null block
    expect(bytes).toBe((specs[0]!.numBlocks - 1) * kvBytesPerBlock(shape, 'f16', 16));
  });

  it('is capped at a quarter of the available memory, but not below 64 MiB', () => {
    expect(defaultKvBytes(shape, 'f32', 16, 64, 2 * GiB)).toBe(GiB / 2);
    expect(defaultKvBytes(shape, 'f32', 16, 64, 100 * 2 ** 20)).toBe(DEFAULT_KV_MIN_BYTES);
    // A small model needs less than the floor: it gets what it needs.
    const tiny = { ...shape, numLayers: 1, headDim: 8, maxContextLength: 64 };
    expect(defaultKvBytes(tiny, 'f32', 16, 2, 0)).toBe(2 * 4 * kvBytesPerBlock(tiny, 'f32', 16));
  });

  it('an encoder (wholeSequences) gets what one step holds: its tokens, each text rounded up to a block', () => {
    const encoder: ModelShape = { ...shape, wholeSequences: true };
    const perToken = kvBytesPerBlock(shape, 'f32', 16) / 16;
    expect(defaultKvBytes(encoder, 'f32', 16, 64, 64 * GiB, 2048)).toBe((2048 + 64 * 15) * perToken);
    expect(defaultKvBytes(encoder, 'f32', 16, 64, 64 * GiB, 8)).toBe((8 + 8 * 15) * perToken);
    expect(defaultKvBytes(encoder, 'f32', 16, 64, 64 * GiB)).toBe(defaultKvBytes(shape, 'f32', 16, 64, 64 * GiB)); // no step size: as a decoder
  });

  it('counts extra pools: a fixed state per request, and per-token pools', () => {
    const hybrid: ModelShape = { ...shape, extraPools: [{ name: 'state', blockSize: Infinity, bytesPerBlock: 1000 }, { name: 'conv', blockSize: 16, bytesPerBlock: 160 }] };
    const plain = defaultKvBytes(shape, 'f16', 16, 4, 64 * GiB);
    expect(defaultKvBytes(hybrid, 'f16', 16, 4, 64 * GiB)).toBe(plain + 4 * 1000 + 4 * 256 * 16 * 10);
  });

  it('a pipeline without kvCache options takes the backend default precision (f32 here) and the default size', async () => {
    let allocated: { numBlocks: number; precision: string } | undefined;
    const backend = new TestBackend();
    const allocate = backend.allocateCache.bind(backend);
    backend.allocateCache = (config) => ((allocated = config), allocate(config));
    const pipe = await Pipeline.create({ backend, tokenizer: new ByteTokenizer(), scheduler: { maxNumSeqs: 4 } });
    await pipe.close();
    expect(allocated!.precision).toBe('f32');
    expect(allocated!.numBlocks).toBe(planPools(backend.shape, defaultKvBytes(backend.shape, 'f32', 16, 4, 0), 'f32', 16, 4)[0]!.numBlocks);
    const f16 = new TestBackend();
    Object.assign(f16, { shape: { ...f16.shape, defaultKvPrecision: 'f16' } });
    const f16Allocate = f16.allocateCache.bind(f16);
    f16.allocateCache = (config) => ((allocated = config), f16Allocate(config));
    await (await Pipeline.create({ backend: f16, tokenizer: new ByteTokenizer(), kvCache: { size: '1MiB' } })).close();
    expect(allocated!.precision).toBe('f16');
  });
});
