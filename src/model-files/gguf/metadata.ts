/** Typed reads of GGUF metadata values; a wrong type is a ModelLoadError naming the key. */
import { ModelLoadError } from '../../errors.js';
import type { GgufArray, GgufFile, GgufValue } from './reader.js';

export class GgufMetadata {
  constructor(readonly gguf: GgufFile) {}

  has(key: string): boolean {
    return this.gguf.metadata.has(key);
  }

  raw(key: string): GgufValue | undefined {
    return this.gguf.metadata.get(key);
  }

  fail(message: string): never {
    throw new ModelLoadError(`${this.gguf.file}: ${message}`, this.gguf.file);
  }

  string(key: string): string | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') return this.fail(`${key} must be a string`);
    return v;
  }

  number(key: string): number | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail(`${key} must be a finite number`);
    return v;
  }

  positiveInt(key: string, fallback?: number): number {
    const v = this.number(key) ?? fallback;
    if (v === undefined) return this.fail(`missing ${key}`);
    if (!Number.isSafeInteger(v) || v <= 0) return this.fail(`${key} must be a positive integer, got ${v}`);
    return v;
  }

  positiveNumber(key: string, fallback?: number): number {
    const v = this.number(key) ?? fallback;
    if (v === undefined) return this.fail(`missing ${key}`);
    if (v <= 0) return this.fail(`${key} must be positive, got ${v}`);
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') return this.fail(`${key} must be a bool`);
    return v;
  }

  /** A token id: a non-negative integer below `limit`. */
  tokenId(key: string, limit: number): number | undefined {
    const v = this.number(key);
    if (v === undefined) return undefined;
    if (!Number.isSafeInteger(v) || v < 0 || v >= limit) return this.fail(`${key} ${v} is not a token id (vocabulary of ${limit})`);
    return v;
  }

  array(key: string): GgufArray | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'object') return this.fail(`${key} must be an array`);
    return v;
  }

  strings(key: string): string[] | undefined {
    const a = this.array(key);
    if (a === undefined) return undefined;
    if (!a.values.every((v) => typeof v === 'string')) return this.fail(`${key} must be an array of strings`);
    return a.values as string[];
  }

  numbers(key: string): number[] | undefined {
    const a = this.array(key);
    if (a === undefined) return undefined;
    if (!a.values.every((v) => typeof v === 'number')) return this.fail(`${key} must be an array of numbers`);
    return a.values as number[];
  }
}
