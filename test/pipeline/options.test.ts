import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import { closestKey, describeRange, levenshtein, parseByteSize } from '../../src/pipeline/option-values.js';
import { resolvePipelineOptions, resolveRequestOptions } from '../../src/pipeline/options.js';
import { harness, type Harness } from '../support/harness.js';

let open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.map((h) => h.pipe.close()));
  open = [];
});

async function make(): Promise<Harness> {
  const h = await harness();
  open.push(h);
  return h;
}

/** The InvalidOptionError `run` throws (or rejects with). */
async function optionError(run: () => unknown): Promise<InvalidOptionError> {
  let error: unknown;
  try {
    await run();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(InvalidOptionError);
  return error as InvalidOptionError;
}

describe('kvCache.size', () => {
  it('parses byte sizes and rejects nonsense', () => {
    expect(parseByteSize('4GB')).toBe(4e9);
    expect(parseByteSize('512 MiB')).toBe(512 * 2 ** 20);
    expect(parseByteSize(1000)).toBe(1000);
    expect(parseByteSize('1.5kb')).toBe(1500);
    expect(parseByteSize('lots')).toBeUndefined();
    expect(parseByteSize('-1GB')).toBeUndefined();
    expect(parseByteSize(0)).toBeUndefined();
    expect(parseByteSize('3 parsecs')).toBeUndefined();
  });
});

describe('unknown option keys', () => {
  it('are refused at every level of the pipeline options, naming the key and the closest known one', async () => {
    const cases: [object, string, string][] = [
      [{ kvcache: { size: '1MB' } }, 'kvcache', 'kvCache'],
      [{ kvCache: { sise: '1MB' } }, 'kvCache.sise', 'size'],
      [{ scheduler: { maxNumSeq: 4 } }, 'scheduler.maxNumSeq', 'maxNumSeqs'],
      [{ parsers: { tools: 'hermes' } }, 'parsers.tools', 'tool'],
      [{ thread: 2 }, 'thread', 'threads'],
    ];
    for (const [options, key, closest] of cases) {
      const error = await optionError(() => harness(options as never));
      expect(error.option).toBe(key);
      expect(error.message).toContain(`did you mean "${closest}"?`);
    }
  });

  it('are refused in request options, before anything is generated', async () => {
    const h = await make();
    const error = await optionError(() => h.pipe.generate('x', { maxToken: 4 } as never));
    expect(error.option).toBe('maxToken');
    expect(error.message).toContain('did you mean "maxTokens"?');
    expect((await optionError(() => h.pipe.generate('x', { parsers: { reasonin: 'qwen3' } } as never))).option).toBe('parsers.reasonin');
    expect(() => h.pipe.stream('x', { temprature: 0 } as never)).toThrow(/temprature: unknown option \(did you mean "temperature"\?\)/);
    expect(h.pipe.stats().requests.started).toBe(0);
  });

  it('list the known keys when none is close', async () => {
    const h = await make();
    const error = await optionError(() => h.pipe.generate('x', { bananas: 1 } as never));
    expect(error.message).toMatch(/bananas: unknown option \(known: maxTokens, temperature, .*\)/);
  });

  it('a chat option on a completion is refused, not ignored', async () => {
    const h = await make();
    const tools = [{ type: 'function' as const, function: { name: 'f' } }];
    expect((await optionError(() => h.pipe.generate('x', { tools } as never))).option).toBe('tools');
    expect(() => h.pipe.stream('x', { templateKwargs: {} })).toThrow(InvalidOptionError);
  });

  it('suggests by edit distance, and only near misses', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(closestKey('sise', ['size', 'precision', 'blockSize'])).toBe('size');
    expect(closestKey('kvcache', ['kvCache', 'scheduler'])).toBe('kvCache');
    expect(closestKey('x', ['seed', 'stop'])).toBeUndefined();
  });
});

describe('option values', () => {
  it('say the range they expect in interval notation', async () => {
    const h = await make();
    const message = async (options: object): Promise<string> => (await optionError(() => h.pipe.generate('x', options as never))).message;
    expect(await message({ topP: 0 })).toBe('topP: expected a number in (0, 1], got 0');
    expect(await message({ minP: 2 })).toBe('minP: expected a number in [0, 1], got 2');
    expect(await message({ repetitionPenalty: 0 })).toBe('repetitionPenalty: expected a number in (0, 100], got 0');
    expect(await message({ maxTokens: 0 })).toBe('maxTokens: expected an integer in [1, 1073741824], got 0');
    expect(await message({ logprobs: 1.5 })).toBe('logprobs: expected an integer in [0, 20], got 1.5');
    expect(await message({ temperature: Number.NaN })).toBe('temperature: expected a number in [0, 100], got NaN');
    expect(await message({ priority: 'high' })).toBe('priority: expected a number, got "high"');
    expect(await message({ ignoreEos: 1 })).toBe('ignoreEos: expected true or false, got 1');
    expect(describeRange({ min: 1, max: Infinity })).toBe(' >= 1');
  });

  it('resolve without a pipeline: defaults from generation_config.json, max_new_tokens included', () => {
    const resolved = resolveRequestOptions({}, { doSample: true, temperature: 0.7, topP: 0.9, maxNewTokens: 12 }, false);
    expect(resolved.sampling).toMatchObject({ temperature: 0.7, topP: 0.9 });
    expect(resolved.maxTokens).toBe(12);
    expect(resolveRequestOptions({ maxTokens: 3 }, { maxNewTokens: 12 }, false).maxTokens).toBe(3);
    expect(resolveRequestOptions({}, {}, false).maxTokens).toBeUndefined();
    const pipeline = resolvePipelineOptions({ model: 'm', kvCache: { size: '1KiB', precision: 'u8' }, scheduler: { maxNumBatchedTokens: 32 } });
    expect(pipeline).toMatchObject({ kvBytes: 1024, precision: 'u8', maxNumBatchedTokens: 32, maxNumSeqs: 32, prefixCaching: true, policy: 'fcfs', speculativeRows: 8 });
    expect(resolvePipelineOptions({ model: 'm', scheduler: { speculativeRows: 64 } }).speculativeRows).toBe(64);
    expect(() => resolvePipelineOptions({ model: 'm', scheduler: { speculativeRows: 0 } })).toThrow('scheduler.speculativeRows: expected an integer in [1, 16777216], got 0');
  });
});

describe('generation defaults', () => {
  it("max_new_tokens is a request's maxTokens unless the request sets one", async () => {
    const h = await harness({ generationDefaults: { maxNewTokens: 3 } });
    open.push(h);
    const capped = await h.pipe.generate('x', { ignoreEos: true, temperature: 0 });
    expect(capped.tokenIds).toHaveLength(3);
    expect(capped.finishReason).toBe('length');
    const own = await h.pipe.generate('x', { ignoreEos: true, temperature: 0, maxTokens: 5 });
    expect(own.tokenIds).toHaveLength(5);
  });
});

