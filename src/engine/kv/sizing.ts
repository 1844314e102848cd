/**
 * Turns a byte budget into block counts. The engine counts blocks and bytes;
 * the backend decides the layout, which must not be larger than counted here.
 */

import type { KvPrecision, ModelShape } from '../../backends/backend.js';
import type { PoolSpec } from './kv-cache-manager.js';

/** Bytes per element of the cache; u8 also stores a f32 scale and zero point per token and head. */
export function kvBytesPerBlock(shape: ModelShape, precision: KvPrecision, blockSize: number): number {
  // A backend that reports its own layout (kvBlockBytes for kvBlockSize tokens) is taken at its word.
  if (shape.kvBlockBytes !== undefined && shape.kvBlockSize !== undefined) return (shape.kvBlockBytes / shape.kvBlockSize) * blockSize;
  const perTokenPerHead =
    precision === 'f32' ? 4 * shape.headDim : precision === 'f16' ? 2 * shape.headDim : shape.headDim + 8;
  return 2 /* K and V */ * shape.numLayers * shape.numKvHeads * blockSize * perTokenPerHead;
}

/**
 * Splits a byte budget over the attention pool and the model's extra pools.
 * A fixed-state pool (blockSize Infinity) gets one block per possible running
 * request; the rest is shared so that every pool covers the same token count.
 */
export function planPools(
  shape: ModelShape,
  budgetBytes: number,
  precision: KvPrecision,
  blockSize: number,
  maxNumSeqs: number,
): PoolSpec[] {
  const attentionBytes = kvBytesPerBlock(shape, precision, blockSize);
  const extras = shape.extraPools ?? [];
  let remaining = budgetBytes;
  for (const pool of extras) if (pool.blockSize === Infinity) remaining -= maxNumSeqs * pool.bytesPerBlock;
  let bytesPerToken = attentionBytes / blockSize;
  for (const pool of extras) if (pool.blockSize !== Infinity) bytesPerToken += pool.bytesPerBlock / pool.blockSize;
  const tokens = Math.max(0, Math.floor(remaining / bytesPerToken));
  const specs: PoolSpec[] = [{ name: 'attention', blockSize, numBlocks: Math.floor(tokens / blockSize) + 1 }];
  for (const pool of extras) {
    const blocks = pool.blockSize === Infinity ? maxNumSeqs : Math.floor(tokens / pool.blockSize);
    specs.push({ name: pool.name, blockSize: pool.blockSize, numBlocks: blocks + 1, ...(pool.checkpoints && { checkpoints: true }) });
  }
  return specs;
}

/** The share of the memory available at load that a default-sized cache may take. */
export const DEFAULT_KV_MEMORY_FRACTION = 0.25;
/** A default-sized cache never gets less than this (unless a full context of every request needs less). */
export const DEFAULT_KV_MIN_BYTES = 64 * 2 ** 20;

/**
 * The cache budget when the user sets none: enough for maxNumSeqs requests
 * at the model's full context in every pool, capped at
 * DEFAULT_KV_MEMORY_FRACTION of `availableBytes` (the memory available once
 * the weights are loaded), but not below DEFAULT_KV_MIN_BYTES; for an encoder
 * (ModelShape.wholeSequences), what one step of `stepTokens` needs. The backend
 * allocates the cache without touching it (pages fill in as tokens are
 * written), so a large budget costs memory only as it is used.
 */
export function defaultKvBytes(shape: ModelShape, precision: KvPrecision, blockSize: number, maxNumSeqs: number, availableBytes: number, stepTokens = Infinity): number {
  let bytesPerToken = kvBytesPerBlock(shape, precision, blockSize) / blockSize;
  let fixed = 0;
  for (const pool of shape.extraPools ?? []) {
    if (pool.blockSize === Infinity) fixed += maxNumSeqs * pool.bytesPerBlock;
    else bytesPerToken += pool.bytesPerBlock / pool.blockSize;
  }
  // Each request's context rounded up to whole blocks (planPools adds the null block). An encoder's
  // texts live in the cache for one step only (E3): one step's tokens, each text rounded up to a block.
  const blocksPerRequest = Math.ceil(shape.maxContextLength / blockSize);
  const wanted = shape.wholeSequences === true && Number.isFinite(stepTokens)
    ? fixed + (stepTokens + Math.min(maxNumSeqs, stepTokens) * (blockSize - 1)) * bytesPerToken
    : fixed + maxNumSeqs * blocksPerRequest * blockSize * bytesPerToken;
  const cap = Math.max(DEFAULT_KV_MIN_BYTES, Math.floor(availableBytes * DEFAULT_KV_MEMORY_FRACTION));
  return Math.min(wanted, cap);
}
