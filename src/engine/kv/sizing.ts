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
    specs.push({ name: pool.name, blockSize: pool.blockSize, numBlocks: blocks + 1 });
  }
  return specs;
}
