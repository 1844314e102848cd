/**
 * BlockPool: the blocks of one cache pool, their reference counts, the free
 * list and the prefix-cache index. It counts blocks; it never touches memory.
 *
 * Invariants (checked by `checkInvariants`, asserted after every operation in
 * the property tests):
 *  I1. Block 0 is the null block: never handed out, never freed, never cached,
 *      never in the free list, ref count 0 forever.
 *  I2. A non-null block is in the free list iff its ref count is 0. The list is
 *      intrusive (prev/next arrays), so a block can be in it at most once.
 *  I3. The free list is in LRU order: its head is evicted (handed out) first.
 *      Freed blocks go to the tail, so blocks freed tail-first by a request end
 *      up with that request's last block evicted before its first.
 *  I4. A block has a hash iff it is in the hash index; a cached block stays
 *      findable while free and loses its hash only when it is handed out again
 *      (lazy eviction), or when its owner is about to rewrite it (`uncache`).
 *  I5. Ref counts are changed only by `take` (a fresh block, ref 1), `share`
 *      (an existing block, ref + 1) and `release` (ref - 1); the caller owns
 *      the bookkeeping of who holds what.
 */

const NULL_BLOCK = 0;
const NONE = -1;

export class BlockPool {
  readonly numBlocks: number;
  private readonly refCounts: Int32Array;
  // Intrusive doubly linked free list; sentinel-free, with explicit head/tail.
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private readonly inFreeList: Uint8Array;
  private head = NONE;
  private tail = NONE;
  private freeCount = 0;
  // Prefix cache: block -> its chain hash and tokens; hash -> blocks with that hash.
  private readonly blockHash: (number | undefined)[];
  private readonly blockKey: (CachedBlockKey | undefined)[];
  private readonly hashIndex = new Map<number, number[]>();
  private cachedCount = 0;

  constructor(numBlocks: number) {
    if (!Number.isInteger(numBlocks) || numBlocks < 2) {
      throw new RangeError(`a block pool needs at least 2 blocks (the null block and one more), got ${numBlocks}`);
    }
    this.numBlocks = numBlocks;
    this.refCounts = new Int32Array(numBlocks);
    this.prev = new Int32Array(numBlocks).fill(NONE);
    this.next = new Int32Array(numBlocks).fill(NONE);
    this.inFreeList = new Uint8Array(numBlocks);
    this.blockHash = new Array(numBlocks).fill(undefined);
    this.blockKey = new Array(numBlocks).fill(undefined);
    for (let block = 1; block < numBlocks; block++) this.pushTail(block);
  }

  /** Blocks that can be handed out now (free, cached or not). */
  get numFree(): number {
    return this.freeCount;
  }

  /** Blocks with a ref count above zero. */
  get numUsed(): number {
    return this.numBlocks - 1 - this.freeCount;
  }

  /** Blocks that hold a findable prefix (used or free). */
  get numCached(): number {
    return this.cachedCount;
  }

  refCount(block: number): number {
    return this.refCounts[block] ?? 0;
  }

  /**
   * Hands out `count` fresh blocks (ref 1) from the LRU end, evicting their
   * cache entries. The caller has checked `numFree >= count`.
   */
  take(count: number): number[] {
    if (count > this.freeCount) throw new RangeError(`take(${count}) with only ${this.freeCount} free blocks`);
    const blocks: number[] = [];
    for (let i = 0; i < count; i++) {
      const block = this.head;
      this.unlink(block);
      this.evict(block);
      this.refCounts[block] = 1;
      blocks.push(block);
    }
    return blocks;
  }

  /** Adds an owner to a block (a prefix-cache hit or a fork). Revives it if it was free. */
  share(block: number): void {
    if (block === NULL_BLOCK) throw new RangeError('the null block cannot be shared');
    if (this.refCounts[block] === 0) this.unlink(block);
    this.refCounts[block]! += 1;
  }

  /**
   * Drops one owner from each block, in the order given. A block whose count
   * reaches zero goes to the tail of the free list (cached blocks stay findable).
   * A block listed twice in one call is released twice, as the caller asked;
   * the KV manager dedupes per owner before calling.
   */
  release(blocks: readonly number[]): void {
    for (const block of blocks) {
      if (block === NULL_BLOCK) continue;
      const count = this.refCounts[block]!;
      if (count <= 0) throw new RangeError(`block ${block} released with ref count ${count}`);
      this.refCounts[block] = count - 1;
      if (count === 1) this.pushTail(block);
    }
  }

  /** Finds a cached block by its chain hash, verifying parent hash and tokens. */
  lookup(key: CachedBlockKey): number | undefined {
    const candidates = this.hashIndex.get(key.hash);
    if (candidates === undefined) return undefined;
    for (const block of candidates) {
      const stored = this.blockKey[block]!;
      if (stored.parentHash === key.parentHash && sameTokens(stored.tokens, key.tokens)) return block;
    }
    return undefined;
  }

  /** Marks a full, computed, owned block as holding `key`'s tokens. Idempotent. */
  cache(block: number, key: CachedBlockKey): void {
    if (block === NULL_BLOCK || this.blockHash[block] !== undefined) return;
    if (this.lookup(key) !== undefined) return; // an identical block is cached already; keep one
    this.blockHash[block] = key.hash;
    this.blockKey[block] = key;
    const list = this.hashIndex.get(key.hash);
    if (list === undefined) this.hashIndex.set(key.hash, [block]);
    else list.push(block);
    this.cachedCount++;
  }

  /**
   * Drops a block's prefix-cache entry (its contents are about to change:
   * KvCacheManager.truncate). The block keeps its owners. A no-op for a block
   * that holds no hash.
   */
  uncache(block: number): void {
    this.evict(block);
  }

  isCached(block: number): boolean {
    return this.blockHash[block] !== undefined;
  }

  /** Free blocks among `blocks` (reviving them costs capacity). */
  countFree(blocks: readonly number[]): number {
    let free = 0;
    for (const block of blocks) if (this.refCounts[block] === 0) free++;
    return free;
  }

  /** Throws if any invariant is broken. For tests and debug builds only (O(blocks)). */
  checkInvariants(): void {
    if (this.refCounts[NULL_BLOCK] !== 0 || this.inFreeList[NULL_BLOCK] === 1 || this.blockHash[NULL_BLOCK] !== undefined) {
      throw new Error('I1: the null block was touched');
    }
    const seen = new Uint8Array(this.numBlocks);
    let count = 0;
    let previous = NONE;
    for (let block = this.head; block !== NONE; block = this.next[block]!) {
      if (seen[block] === 1) throw new Error(`I2: block ${block} appears twice in the free list`);
      if (this.prev[block] !== previous) throw new Error(`I2: broken prev link at block ${block}`);
      seen[block] = 1;
      count++;
      previous = block;
    }
    if (previous !== this.tail) throw new Error('I2: tail does not end the free list');
    if (count !== this.freeCount) throw new Error(`I2: free count ${this.freeCount} but ${count} blocks listed`);
    for (let block = 1; block < this.numBlocks; block++) {
      const free = this.refCounts[block] === 0;
      if (free !== (seen[block] === 1) || free !== (this.inFreeList[block] === 1)) {
        throw new Error(`I2: block ${block} ref ${this.refCounts[block]} but inFreeList=${seen[block]}`);
      }
      if (this.refCounts[block]! < 0) throw new Error(`I5: block ${block} has a negative ref count`);
    }
    let cached = 0;
    for (const [hash, blocks] of this.hashIndex) {
      for (const block of blocks) {
        if (this.blockHash[block] !== hash) throw new Error(`I4: index lists block ${block} under a hash it lacks`);
        cached++;
      }
    }
    if (cached !== this.cachedCount) throw new Error('I4: cached count disagrees with the index');
  }

  private evict(block: number): void {
    const hash = this.blockHash[block];
    if (hash === undefined) return;
    const list = this.hashIndex.get(hash)!;
    const at = list.indexOf(block);
    list.splice(at, 1);
    if (list.length === 0) this.hashIndex.delete(hash);
    this.blockHash[block] = undefined;
    this.blockKey[block] = undefined;
    this.cachedCount--;
  }

  private pushTail(block: number): void {
    this.prev[block] = this.tail;
    this.next[block] = NONE;
    if (this.tail === NONE) this.head = block;
    else this.next[this.tail] = block;
    this.tail = block;
    this.inFreeList[block] = 1;
    this.freeCount++;
  }

  private unlink(block: number): void {
    const before = this.prev[block]!;
    const after = this.next[block]!;
    if (before === NONE) this.head = after;
    else this.next[before] = after;
    if (after === NONE) this.tail = before;
    else this.prev[after] = before;
    this.prev[block] = NONE;
    this.next[block] = NONE;
    this.inFreeList[block] = 0;
    this.freeCount--;
  }
}

/** What identifies a full block's contents: its parent's chain hash and its own tokens. */
export interface CachedBlockKey {
  readonly hash: number;
  readonly parentHash: number;
  readonly tokens: readonly number[];
}

function sameTokens(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Chain hash of a block: mixes the parent's hash with the block's tokens (and a
 * salt for extra keys). 52 bits from two 32-bit lanes; hits are verified
 * against the stored parent hash and tokens, so a collision costs a miss,
 * never a wrong answer.
 */
export function blockHash(parentHash: number, tokens: readonly number[], salt = 0): number {
  let a = (parentHash >>> 0) ^ 0x9e3779b9 ^ salt;
  let b = Math.floor(parentHash / 4294967296) ^ 0x85ebca6b;
  for (const token of tokens) {
    a = Math.imul(a ^ token, 0xcc9e2d51);
    a = (a << 15) | (a >>> 17);
    b = Math.imul(b ^ a, 0x1b873593);
    b = (b << 13) | (b >>> 19);
    b = (Math.imul(b, 5) + 0xe6546b64) | 0;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  return (b >>> 12) * 4294967296 + (a >>> 0);
}

export const ROOT_HASH = 0;
