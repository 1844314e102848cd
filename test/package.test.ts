import { describe, expect, it } from 'vitest';
import { InvalidOptionError, WeftError } from '../src/index.js';

describe('package surface', () => {
  it('exports typed errors with stable codes', () => {
    const error = new InvalidOptionError('kvCache.size', 'must be positive');
    expect(error).toBeInstanceOf(WeftError);
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe('kvCache.size: must be positive');
    expect(error.name).toBe('InvalidOptionError');
  });
});
