import { describe, expect, it } from 'vitest';
import { parseByteSize } from '../../src/pipeline/options.js';

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
