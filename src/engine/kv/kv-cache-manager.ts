/**
 * KvCacheManager: which blocks of which pool each request holds.
 *
 * Pool 0 is attention KV (prefix-cacheable); further pools belong to hybrid
 * models (a fixed per-request state, blockSize = Infinity, or checkpoints with
 * a larger block size). A hybrid model's prefix hit needs its linear state at
 * the hit's end: with a checkpoints pool, hits end on checkpoint boundaries
 * whose checkpoint is cached (K6); without one, there is no prefix caching.
 *
 * Invariants (on top of BlockPool's; asserted by `checkInvariants`):
 *  K1. Pools are one transaction. Every public mutation first computes what
 *      every pool needs, returns NoCapacity with nothing changed if any pool
 *      lacks room, and only then mutates all pools. So a request has a table in
 *      every pool or in none, and each table covers exactly the request's
 *      tokens: blocksFor(pool, numTokens) blocks.
 *  K2. One owner map: a request's tables live in `owned` only. `free` pops the
 *      entry, so freeing twice (or freeing an unknown request) is a no-op.
 *  K3. For every block, its ref count equals the number of table slots
 *      (over all requests) that hold it. A table never holds a block twice.
 *  K4. Only full, computed attention blocks are cached; a request never writes
 *      into a block it shares (prefix hits are whole blocks, forks copy the
 *      partial tail), so cached contents never change.
 *  K5. free releases tail first, so a request's least reusable blocks are
 *      evicted before its prefix.
 *  K6. A checkpoint block is cached under the key of the attention block that
 *      ends at its boundary, only once its tokens are computed (the backend
 *      wrote it in that step), and a prefix hit shares checkpoints 0..k-1 with
 *      attention blocks 0..k*r-1 (r attention blocks per checkpoint): the hit's
 *      state is the one cached at its end, never a stale or unwritten one.
 *  K7. Roll back is `truncate(request, n)`: the request's attention table then
 *      covers exactly n tokens (K1), the blocks past it are released tail
 *      first (K5; a full block released keeps its hash: its contents are still
 *      the ones hashed), and the block that now ends partially, the one the
 *      request will rewrite, holds no prefix-cache hash: a later prompt can
 *      never hit contents that are about to change. A block the request shares
 *      is never rewritten (K4): truncating into one is refused, as is any
 *      truncation of a request holding recurrent state (a further pool: its
 *      state cannot be rolled back by dropping blocks; docs/speculative.md).
 *      Refusals change nothing.
 */

import { OK, err, ok, type Result } from '../result.js';
import { BlockPool, ROOT_HASH, blockHash, type CachedBlockKey } from './block-pool.js';

export interface PoolSpec {
  readonly name: string;
  /** Tokens per block; Infinity for a fixed per-request state (always one block). */
  readonly blockSize: number;
  /** Blocks in the pool, including the null block 0. */
  readonly numBlocks: number;
  /** A checkpoints pool (ExtraPoolSpec.checkpoints): its blocks are state snapshots prefix hits resume from. */
  readonly checkpoints?: boolean;
}

export type KvError =
  | { readonly kind: 'NoCapacity'; readonly pool: string; readonly needed: number; readonly free: number }
  | { readonly kind: 'UnknownRequest'; readonly requestId: number }
  | { readonly kind: 'AlreadyAllocated'; readonly requestId: number }
  /** truncate: the request holds recurrent state (a linear-attention pool), which dropping blocks cannot roll back (K7). */
  | { readonly kind: 'NotTruncatable'; readonly pool: string }
  /** truncate: the block that would end partially is shared with another request or the prefix cache's other owners (K4). */
  | { readonly kind: 'SharedBlock'; readonly requestId: number; readonly block: number }
  /** truncate: the request's table does not reach that many tokens. */
  | { readonly kind: 'BeyondEnd'; readonly requestId: number; readonly numTokens: number };

/** Cached attention blocks that match a prompt's prefix. */
export interface PrefixHit {
  readonly blocks: readonly number[];
  readonly hashes: readonly number[];
  /** Tokens covered: blocks.length * blockSize. */
  readonly numTokens: number;
  /** Hybrid models: the checkpoints covering the hit (the last one holds the state at its end). */
  readonly checkpoints: readonly number[];
}

export const NO_PREFIX_HIT: PrefixHit = { blocks: [], hashes: [], numTokens: 0, checkpoints: [] };

/** A block copy the backend must do before the step (copy-on-write after fork). */
export interface BlockCopy {
  readonly pool: number;
  readonly src: number;
  readonly dst: number;
}

export interface PoolStats {
  readonly name: string;
  readonly blockSize: number;
  readonly totalBlocks: number;
  readonly usedBlocks: number;
  readonly cachedBlocks: number;
  readonly freeBlocks: number;
}

interface OwnedTables {
  readonly tables: number[][];
  /** Chain hashes of the leading full attention blocks, as far as computed. */
  readonly hashes: number[];
  /** Leading checkpoint blocks cached (shared from the hit, or computed since). */
  checkpointsCached: number;
  /** Tokens of the prefix hit the request was admitted with (its state then comes from a checkpoint). */
  readonly hitTokens: number;
}

export class KvCacheManager {
  readonly pools: readonly BlockPool[];
  readonly specs: readonly PoolSpec[];
  readonly prefixCaching: boolean;
  /** The checkpoints pool's index, or -1. */
  readonly checkpointPool: number;
  private readonly owned = new Map<number, OwnedTables>();

  constructor(specs: readonly PoolSpec[], options: { prefixCaching: boolean }) {
    if (specs.length === 0) throw new RangeError('a KV cache needs at least one pool');
    this.specs = specs;
    this.pools = specs.map((spec) => new BlockPool(spec.numBlocks));
    this.checkpointPool = specs.findIndex((spec) => spec.checkpoints === true);
    const checkpoint = specs[this.checkpointPool];
    if (checkpoint !== undefined && (this.checkpointPool === 0 || checkpoint.blockSize % specs[0]!.blockSize !== 0))
      throw new RangeError(`the checkpoints pool's block size ${checkpoint.blockSize} must be a multiple of the attention block size ${specs[0]!.blockSize}`);
    // A linear-attention state cannot be rebuilt from KV blocks alone: a hybrid
    // model hits prefixes only through its checkpoints (K6).
    this.prefixCaching = options.prefixCaching && (specs.length === 1 || this.checkpointPool > 0);
  }

  get blockSize(): number {
    return this.specs[0]!.blockSize;
  }

  /**
   * Blocks a pool needs to hold `numTokens` tokens. A checkpoint exists only
   * for a boundary the tokens reach: floor(numTokens / interval) of them.
   */
  blocksFor(pool: number, numTokens: number): number {
    const size = this.specs[pool]!.blockSize;
    if (size === Infinity) return 1;
    if (pool === this.checkpointPool) return Math.floor(numTokens / size);
    return Math.ceil(numTokens / size);
  }

  /** Whether `numTokens` tokens could ever fit, in an otherwise empty cache. */
  fitsEmpty(numTokens: number): boolean {
    return this.specs.every((spec, pool) => this.blocksFor(pool, numTokens) <= spec.numBlocks - 1);
  }

  has(requestId: number): boolean {
    return this.owned.has(requestId);
  }

  /** Attention block table of a request (empty if it holds none). */
  blockTable(requestId: number, pool = 0): readonly number[] {
    return this.owned.get(requestId)?.tables[pool] ?? [];
  }

  /**
   * The longest run of cached full blocks matching `tokens`, capped so that at
   * least one token is left to compute (its logits are needed).
   */
  findPrefix(tokens: readonly number[]): PrefixHit {
    if (!this.prefixCaching) return NO_PREFIX_HIT;
    const size = this.blockSize;
    const maxBlocks = Math.floor((tokens.length - 1) / size);
    const pool = this.pools[0]!;
    const blocks: number[] = [];
    const hashes: number[] = [];
    let parentHash = ROOT_HASH;
    const keys: CachedBlockKey[] = [];
    for (let i = 0; i < maxBlocks; i++) {
      const blockTokens = tokens.slice(i * size, (i + 1) * size);
      const hash = blockHash(parentHash, blockTokens);
      const key = { hash, parentHash, tokens: blockTokens };
      const block = pool.lookup(key);
      if (block === undefined) break;
      blocks.push(block);
      hashes.push(hash);
      keys.push(key);
      parentHash = hash;
    }
    if (this.checkpointPool < 0) return { blocks, hashes, numTokens: blocks.length * size, checkpoints: [] };
    // Hybrid: the hit ends at the last boundary up to which every checkpoint is cached (K6).
    const perCheckpoint = this.specs[this.checkpointPool]!.blockSize / size;
    const checkpoints: number[] = [];
    for (let end = perCheckpoint; end <= blocks.length; end += perCheckpoint) {
      const block = this.pools[this.checkpointPool]!.lookup(keys[end - 1]!);
      if (block === undefined) break;
      checkpoints.push(block);
    }
    const covered = checkpoints.length * perCheckpoint;
    return { blocks: blocks.slice(0, covered), hashes: hashes.slice(0, covered), numTokens: covered * size, checkpoints };
  }

  /**
   * Whether the request's next step must load its state from its checkpoint:
   * it was admitted with a prefix hit (of a hybrid model) and has computed
   * nothing since (`numComputed` still equals the hit).
   */
  resumesFromCheckpoint(requestId: number, numComputed: number): boolean {
    const owned = this.owned.get(requestId);
    return owned !== undefined && owned.hitTokens > 0 && this.checkpointPool > 0 && numComputed === owned.hitTokens;
  }

  /**
   * Admits a request: shares the prefix-hit blocks and takes fresh blocks so
   * that every pool covers `numTokens` tokens. All pools or none.
   */
  allocate(requestId: number, hit: PrefixHit, numTokens: number): Result<void, KvError> {
    if (this.owned.has(requestId)) return err({ kind: 'AlreadyAllocated', requestId });
    const fresh: number[] = [];
    const reusedIn = (p: number): readonly number[] => (p === 0 ? hit.blocks : p === this.checkpointPool ? hit.checkpoints : []);
    for (let p = 0; p < this.pools.length; p++) {
      const reused = reusedIn(p);
      const needed = Math.max(0, this.blocksFor(p, numTokens) - reused.length);
      const pool = this.pools[p]!;
      // Reviving a free cached block takes it out of the free list too.
      const cost = needed + pool.countFree(reused);
      if (cost > pool.numFree) return err({ kind: 'NoCapacity', pool: this.specs[p]!.name, needed: cost, free: pool.numFree });
      fresh.push(needed);
    }
    const tables: number[][] = [];
    for (let p = 0; p < this.pools.length; p++) {
      const pool = this.pools[p]!;
      const reused = reusedIn(p);
      for (const block of reused) pool.share(block);
      tables.push([...reused, ...pool.take(fresh[p]!)]);
    }
    this.owned.set(requestId, { tables, hashes: [...hit.hashes], checkpointsCached: hit.checkpoints.length, hitTokens: hit.numTokens });
    return OK;
  }

  /** Grows a running request's tables to cover `numTokens` tokens. All pools or none. */
  appendSlots(requestId: number, numTokens: number): Result<void, KvError> {
    const owned = this.owned.get(requestId);
    if (owned === undefined) return err({ kind: 'UnknownRequest', requestId });
    // Check every pool first (nothing changes on NoCapacity), then take.
    let growing = false;
    for (let p = 0; p < this.pools.length; p++) {
      const needed = this.blocksFor(p, numTokens) - owned.tables[p]!.length;
      if (needed <= 0) continue;
      growing = true;
      const pool = this.pools[p]!;
      if (needed > pool.numFree) return err({ kind: 'NoCapacity', pool: this.specs[p]!.name, needed, free: pool.numFree });
    }
    if (!growing) return OK; // the decode hot path: the last block has room
    for (let p = 0; p < this.pools.length; p++) {
      const needed = this.blocksFor(p, numTokens) - owned.tables[p]!.length;
      if (needed > 0) owned.tables[p]!.push(...this.pools[p]!.take(needed));
    }
    return OK;
  }

  /**
   * Gives `childId` the first `numTokens` tokens of `parentId`: full blocks are
   * shared, a partial tail block (and a fixed state) is copied into a fresh
   * block. Returns the copies the backend must make. All pools or none.
   * n > 1 sampling calls it to share a leader's prompt with its followers
   * (engine/parallel-sampling.ts; the copies become StepBatch.blockCopies).
   */
  fork(parentId: number, childId: number, numTokens: number): Result<BlockCopy[], KvError> {
    const parent = this.owned.get(parentId);
    if (parent === undefined) return err({ kind: 'UnknownRequest', requestId: parentId });
    if (this.owned.has(childId)) return err({ kind: 'AlreadyAllocated', requestId: childId });
    const plans = this.pools.map((_, p) => {
      const size = this.specs[p]!.blockSize;
      const total = Math.min(this.blocksFor(p, numTokens), parent.tables[p]!.length);
      const full = size === Infinity ? 0 : Math.min(total, Math.floor(numTokens / size));
      return { full, copied: total - full };
    });
    for (let p = 0; p < this.pools.length; p++) {
      const pool = this.pools[p]!;
      if (plans[p]!.copied > pool.numFree) {
        return err({ kind: 'NoCapacity', pool: this.specs[p]!.name, needed: plans[p]!.copied, free: pool.numFree });
      }
    }
    const copies: BlockCopy[] = [];
    const tables = this.pools.map((pool, p) => {
      const { full, copied } = plans[p]!;
      const source = parent.tables[p]!;
      const shared = source.slice(0, full);
      for (const block of shared) pool.share(block);
      const fresh = pool.take(copied);
      fresh.forEach((dst, i) => copies.push({ pool: p, src: source[full + i]!, dst }));
      return [...shared, ...fresh];
    });
    const fullBlocks = tables[0]!.length - plans[0]!.copied;
    // A child's own checkpoints are copies (not cached); its state slot is a copy too, so it resumes nothing.
    this.owned.set(childId, { tables, hashes: parent.hashes.slice(0, fullBlocks), checkpointsCached: 0, hitTokens: 0 });
    return ok(copies);
  }

  /**
   * Records the full attention blocks whose tokens are now computed, so later
   * prompts can hit them. `tokens` holds at least `numComputed` tokens.
   */
  cacheComputed(requestId: number, tokens: readonly number[], numComputed: number): void {
    if (!this.prefixCaching) return;
    const owned = this.owned.get(requestId);
    if (owned === undefined) return;
    const size = this.blockSize;
    const table = owned.tables[0]!;
    const fullBlocks = Math.min(Math.floor(numComputed / size), table.length);
    const pool = this.pools[0]!;
    for (let i = owned.hashes.length; i < fullBlocks; i++) {
      const parentHash = i === 0 ? ROOT_HASH : owned.hashes[i - 1]!;
      const blockTokens = tokens.slice(i * size, (i + 1) * size);
      const key: CachedBlockKey = { hash: blockHash(parentHash, blockTokens), parentHash, tokens: blockTokens };
      pool.cache(table[i]!, key);
      owned.hashes.push(key.hash);
    }
    if (this.checkpointPool < 0) return;
    // Checkpoints whose tokens are computed, under the key of the attention block ending at their boundary (K6).
    const perCheckpoint = this.specs[this.checkpointPool]!.blockSize / size;
    const checkpointTable = owned.tables[this.checkpointPool]!;
    const computed = Math.min(Math.floor(owned.hashes.length / perCheckpoint), checkpointTable.length);
    for (let j = owned.checkpointsCached; j < computed; j++) {
      const last = (j + 1) * perCheckpoint - 1;
      const blockTokens = tokens.slice(last * size, (last + 1) * size);
      const key: CachedBlockKey = { hash: owned.hashes[last]!, parentHash: last === 0 ? ROOT_HASH : owned.hashes[last - 1]!, tokens: blockTokens };
      this.pools[this.checkpointPool]!.cache(checkpointTable[j]!, key);
    }
    owned.checkpointsCached = Math.max(owned.checkpointsCached, computed);
  }

  /**
   * Rolls a request back to its first `numTokens` tokens (K7): releases the
   * attention blocks past them, tail first, and drops the prefix-cache hash of
   * a block that now ends partially (the request will rewrite its tail).
   * Refused, with nothing changed, for a request holding recurrent state
   * (NotTruncatable), into a block it shares (SharedBlock), or past the end of
   * its table (BeyondEnd). Speculative decoding calls it for rejected tokens.
   */
  truncate(requestId: number, numTokens: number): Result<void, KvError> {
    const owned = this.owned.get(requestId);
    if (owned === undefined) return err({ kind: 'UnknownRequest', requestId });
    if (this.pools.length > 1) return err({ kind: 'NotTruncatable', pool: this.specs[1]!.name });
    const table = owned.tables[0]!;
    const keep = this.blocksFor(0, numTokens);
    if (!Number.isInteger(numTokens) || numTokens < 0 || keep > table.length) return err({ kind: 'BeyondEnd', requestId, numTokens });
    const size = this.blockSize;
    const fullBlocks = Math.floor(numTokens / size);
    const pool = this.pools[0]!;
    const partial = keep > fullBlocks ? table[fullBlocks]! : undefined;
    if (partial !== undefined && pool.refCount(partial) > 1) return err({ kind: 'SharedBlock', requestId, block: partial });
    // Check done: mutate. Tail first (K5); a table never holds a block twice (K3).
    pool.release(table.splice(keep).reverse());
    if (partial !== undefined) pool.uncache(partial);
    if (owned.hashes.length > fullBlocks) owned.hashes.length = fullBlocks;
    return OK;
  }

  /** Releases every block of a request in every pool, tail first. Idempotent. */
  free(requestId: number): void {
    const owned = this.owned.get(requestId);
    if (owned === undefined) return;
    this.owned.delete(requestId);
    owned.tables.forEach((table, p) => {
      const unique = [...new Set(table)].reverse();
      this.pools[p]!.release(unique);
    });
  }

  stats(): PoolStats[] {
    return this.pools.map((pool, p) => ({
      name: this.specs[p]!.name,
      blockSize: this.specs[p]!.blockSize,
      totalBlocks: pool.numBlocks - 1,
      usedBlocks: pool.numUsed,
      cachedBlocks: pool.numCached,
      freeBlocks: pool.numFree,
    }));
  }

  /** Throws if an invariant is broken (O(blocks); tests only). */
  checkInvariants(expectedTokens?: ReadonlyMap<number, number>): void {
    this.pools.forEach((pool) => pool.checkInvariants());
    for (let p = 0; p < this.pools.length; p++) {
      const holders = new Int32Array(this.pools[p]!.numBlocks);
      for (const [requestId, owned] of this.owned) {
        const table = owned.tables[p];
        if (table === undefined) throw new Error(`K1: request ${requestId} has no table in pool ${p}`);
        if (new Set(table).size !== table.length) throw new Error(`K3: request ${requestId} holds a block twice`);
        for (const block of table) holders[block]! += 1;
        const tokens = expectedTokens?.get(requestId);
        if (tokens !== undefined && table.length !== this.blocksFor(p, tokens)) {
          throw new Error(`K1: request ${requestId} has ${table.length} blocks in pool ${p}, needs ${this.blocksFor(p, tokens)}`);
        }
        if (p === 0 && tokens !== undefined) {
          const full = Math.floor(tokens / this.blockSize);
          if (owned.hashes.length > full) throw new Error(`K7: request ${requestId} keeps ${owned.hashes.length} block hashes for ${full} full blocks`);
          const tail = table[full];
          if (tail !== undefined && this.pools[0]!.refCount(tail) === 1 && this.pools[0]!.isCached(tail)) {
            throw new Error(`K7: request ${requestId}'s partial tail block ${tail} is in the prefix cache`);
          }
        }
      }
      for (let block = 1; block < holders.length; block++) {
        if (holders[block] !== this.pools[p]!.refCount(block)) {
          throw new Error(`K3: pool ${p} block ${block} has ref ${this.pools[p]!.refCount(block)} but ${holders[block]} holders`);
        }
      }
    }
  }
}
