/**
 * The check of a custom backend's declared ModelShape, at Pipeline.create.
 * Every field the engine and the cache sizing read is checked here, so a shape
 * with NaN, a string or a negative count is refused with InvalidOptionError
 * naming the field (`backend.shape.numLayers`), its value and what is valid,
 * instead of surfacing later as a RangeError from a block pool of NaN blocks.
 * Weft's own backends read their shapes from checked model files.
 */

import { InvalidOptionError } from '../errors.js';

/** Largest count or id the engine's Int32Array batches and masks can hold. */
const MAX_INT32 = 2 ** 31 - 1;

/** Throws InvalidOptionError for the first field of `shape` the engine could not use. */
export function checkModelShape(shape: unknown, path = 'backend.shape'): void {
  if (typeof shape !== 'object' || shape === null) fail(path, shape, 'an object with vocabSize, numLayers, numKvHeads, headDim and maxContextLength');
  const fields = shape as Record<string, unknown>;
  count(fields, path, 'vocabSize', 1, 'the number of token ids the model has logits for');
  count(fields, path, 'numLayers', 1, 'the layers that hold attention KV');
  count(fields, path, 'numKvHeads', 1, 'the KV heads per layer');
  count(fields, path, 'headDim', 1, 'the values per head');
  count(fields, path, 'maxContextLength', 2, 'the longest prompt plus generated tokens');
  if (fields['kvBlockSize'] !== undefined) count(fields, path, 'kvBlockSize', 1, 'the tokens per KV block the backend fixes');
  if (fields['kvBlockBytes'] !== undefined) count(fields, path, 'kvBlockBytes', 1, 'the bytes of one KV block in backend memory');
  const stepBytes = fields['stepBytesPerToken'];
  if (stepBytes !== undefined && !(typeof stepBytes === 'number' && Number.isFinite(stepBytes) && stepBytes >= 0)) {
    fail(`${path}.stepBytesPerToken`, stepBytes, 'a finite number of bytes, at least 0 (or leave it out)');
  }
  const copies = fields['copiesBlocks'];
  if (copies !== undefined && typeof copies !== 'boolean') fail(`${path}.copiesBlocks`, copies, 'true or false (or leave it out)');
  const precision = fields['defaultKvPrecision'];
  if (precision !== undefined && precision !== 'f32' && precision !== 'f16' && precision !== 'u8') {
    fail(`${path}.defaultKvPrecision`, precision, '"f32", "f16" or "u8" (or leave it out)');
  }
  const extra = fields['extraPools'];
  if (extra === undefined) return;
  if (!Array.isArray(extra)) fail(`${path}.extraPools`, extra, 'an array of { name, blockSize, bytesPerBlock } (or leave it out)');
  const names = new Set<string>(['attention']);
  extra.forEach((pool: unknown, i) => {
    const at = `${path}.extraPools[${i}]`;
    if (typeof pool !== 'object' || pool === null) fail(at, pool, 'an object with name, blockSize and bytesPerBlock');
    const { name, blockSize, bytesPerBlock, checkpoints } = pool as Record<string, unknown>;
    if (checkpoints !== undefined && typeof checkpoints !== 'boolean') fail(`${at}.checkpoints`, checkpoints, 'a boolean (or leave it out)');
    if (checkpoints === true && blockSize === Infinity) fail(`${at}.blockSize`, blockSize, 'a whole number of tokens for a checkpoints pool (its interval)');
    if (checkpoints === true && extra.some((other: unknown, j) => j !== i && (other as Record<string, unknown> | null)?.checkpoints === true))
      fail(`${at}.checkpoints`, checkpoints, 'at most one checkpoints pool');
    if (typeof name !== 'string' || name === '' || names.has(name)) fail(`${at}.name`, name, 'a non-empty name no other pool has (nor "attention")');
    names.add(name);
    if (blockSize !== Infinity && !(Number.isInteger(blockSize) && (blockSize as number) >= 1 && (blockSize as number) <= MAX_INT32)) {
      fail(`${at}.blockSize`, blockSize, `an integer from 1 to ${MAX_INT32} (tokens a block covers), or Infinity for a fixed per-request state`);
    }
    if (!(Number.isInteger(bytesPerBlock) && (bytesPerBlock as number) >= 1)) fail(`${at}.bytesPerBlock`, bytesPerBlock, 'a whole number of bytes, at least 1');
  });
}

/** A field that must be an integer in [min, MAX_INT32]. */
function count(fields: Record<string, unknown>, path: string, field: string, min: number, what: string): void {
  const value = fields[field];
  if (Number.isInteger(value) && (value as number) >= min && (value as number) <= MAX_INT32) return;
  fail(`${path}.${field}`, value, `an integer from ${min} to ${MAX_INT32} (${what})`);
}

function fail(option: string, value: unknown, valid: string): never {
  throw new InvalidOptionError(option, `got ${describe(value)}; expected ${valid}`);
}

/** The value as the message shows it: NaN and Infinity by name, strings quoted, objects by kind. */
function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean' || value === undefined || value === null) return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
