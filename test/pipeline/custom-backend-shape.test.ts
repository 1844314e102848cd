/**
 * A custom backend's declared shape is checked at Pipeline.create: a field the
 * engine or the cache sizing reads that is NaN, a string, negative or missing
 * is an InvalidOptionError naming the field, its value and what is valid, not
 * a RangeError from deep inside the cache (a block pool of NaN blocks).
 */
import { describe, expect, it } from 'vitest';
import type { ModelShape } from '../../src/backends/backend.js';
import { Pipeline } from '../../src/create.js';
import { InvalidOptionError } from '../../src/errors.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';

/** A test backend whose shape has `patch` over the good one. */
function backendWith(patch: Record<string, unknown>): TestBackend {
  const backend = new TestBackend();
  (backend as { shape: ModelShape }).shape = { ...backend.shape, ...patch } as ModelShape;
  return backend;
}

async function createError(backend: unknown): Promise<InvalidOptionError> {
  const error = await Pipeline.create({ backend: backend as TestBackend, tokenizer: new ByteTokenizer() }).then(
    async (pipe) => {
      await pipe.close();
      throw new Error('expected Pipeline.create to refuse the backend');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidOptionError);
  return error as InvalidOptionError;
}

describe('a custom backend with a broken shape', () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['numLayers NaN', { numLayers: NaN }, 'backend.shape.numLayers', /got NaN; expected an integer from 1/],
    ['numKvHeads a string', { numKvHeads: '2' }, 'backend.shape.numKvHeads', /got "2"; expected an integer from 1/],
    ['headDim 0', { headDim: 0 }, 'backend.shape.headDim', /got 0; expected an integer from 1/],
    ['vocabSize missing', { vocabSize: undefined }, 'backend.shape.vocabSize', /got undefined; expected an integer from 1/],
    ['maxContextLength 1.5', { maxContextLength: 1.5 }, 'backend.shape.maxContextLength', /got 1.5; expected an integer from 2/],
    ['kvBlockSize -16', { kvBlockSize: -16 }, 'backend.shape.kvBlockSize', /got -16/],
    ['kvBlockBytes Infinity', { kvBlockSize: 16, kvBlockBytes: Infinity }, 'backend.shape.kvBlockBytes', /got Infinity/],
    ['stepBytesPerToken NaN', { stepBytesPerToken: NaN }, 'backend.shape.stepBytesPerToken', /got NaN; expected a finite number/],
    ['defaultKvPrecision "bf16"', { defaultKvPrecision: 'bf16' }, 'backend.shape.defaultKvPrecision', /got "bf16"; expected "f32", "f16" or "u8"/],
    ['copiesBlocks "no"', { copiesBlocks: 'no' }, 'backend.shape.copiesBlocks', /got "no"; expected true or false/],
    ['extraPools not an array', { extraPools: {} }, 'backend.shape.extraPools', /got an object; expected an array/],
    ['an extra pool of NaN-token blocks', { extraPools: [{ name: 'state', blockSize: NaN, bytesPerBlock: 64 }] }, 'backend.shape.extraPools[0].blockSize', /got NaN.*or Infinity/],
    ['an extra pool with no bytes', { extraPools: [{ name: 'state', blockSize: Infinity, bytesPerBlock: 0 }] }, 'backend.shape.extraPools[0].bytesPerBlock', /got 0/],
    ['two extra pools of one name', { extraPools: [{ name: 'a', blockSize: 16, bytesPerBlock: 64 }, { name: 'a', blockSize: 16, bytesPerBlock: 64 }] }, 'backend.shape.extraPools[1].name', /got "a"/],
  ];
  for (const [what, patch, option, message] of cases) {
    it(`refuses ${what}, naming ${option}`, async () => {
      const error = await createError(backendWith(patch));
      expect(error.option).toBe(option);
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toMatch(message);
      expect(error.message.startsWith(`${option}: `)).toBe(true);
    });
  }

  it('refuses a backend with no shape, or that is not an object', async () => {
    expect((await createError({ execute() {}, allocateCache() {}, dispose() {} })).option).toBe('backend.shape');
    expect((await createError(null)).option).toBe('backend');
  });

  it('accepts a good shape, hybrid pools and optional fields included, and serves', async () => {
    const backend = backendWith({ stepBytesPerToken: 0, defaultKvPrecision: 'f32', extraPools: [{ name: 'state', blockSize: Infinity, bytesPerBlock: 256 }] });
    const pipe = await Pipeline.create({ backend, tokenizer: new ByteTokenizer(), kvCache: { size: '4MB' } });
    try {
      expect((await pipe.generate('hi', { maxTokens: 3, temperature: 0, ignoreEos: true })).finishReason).toBe('length');
    } finally {
      await pipe.close();
    }
  });
});
