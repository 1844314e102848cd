import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockPool } from '../../src/engine/kv/block-pool.js';
import { KvCacheManager, NO_PREFIX_HIT, type PoolSpec } from '../../src/engine/kv/kv-cache-manager.js';
import { kvBytesPerBlock, planPools } from '../../src/engine/kv/sizing.js';

const BLOCK = 4;

describe('BlockPool', () => {
  it('hands out blocks in LRU order and never the null block', () => {
    const pool = new BlockPool(5);
    expect(pool.numFree).toBe(4);
    const taken = pool.take(4);
    expect(taken).toEqual([1, 2, 3, 4]);
    expect(() => pool.take(1)).toThrow(RangeError);
    pool.release([3, 1]);
    expect(pool.take(2)).toEqual([3, 1]);
    pool.checkInvariants();
  });

  it('keeps freed cached blocks findable until they are handed out again', () => {
    const pool = new BlockPool(3);
    const [block] = pool.take(1);
    const key = { hash: 42, parentHash: 0, tokens: [1, 2] };
    pool.cache(block!, key);
    pool.release([block!]);
    expect(pool.lookup(key)).toBe(block);
    expect(pool.lookup({ ...key, tokens: [1, 3] })).toBeUndefined(); // same hash, other tokens: verified miss
    pool.share(block!); // revive
    expect(pool.numFree).toBe(1);
    pool.release([block!]);
    pool.take(2); // evicts it
    expect(pool.lookup(key)).toBeUndefined();
    pool.checkInvariants();
  });

  it('refuses to release a block that is not held', () => {
    const pool = new BlockPool(3);
    expect(() => pool.release([1])).toThrow(/ref count 0/);
  });
});

describe('sizing', () => {
  it('counts K and V of every layer, and u8 scales', () => {
    const shape = { vocabSize: 10, numLayers: 2, numKvHeads: 4, headDim: 8, maxContextLength: 100 };
    expect(kvBytesPerBlock(shape, 'f32', 16)).toBe(2 * 2 * 4 * 16 * 8 * 4);
    expect(kvBytesPerBlock(shape, 'f16', 16)).toBe(2 * 2 * 4 * 16 * 8 * 2);
    expect(kvBytesPerBlock(shape, 'u8', 16)).toBe(2 * 2 * 4 * 16 * (8 + 8));
    const pools = planPools(shape, kvBytesPerBlock(shape, 'f32', 16) * 10, 'f32', 16, 4);
    expect(pools).toEqual([{ name: 'attention', blockSize: 16, numBlocks: 11 }]);
  });
});

// ---------------------------------------------------------------------------
// Model-based property test: random operation sequences against a simple model.

type Op =
  | { op: 'allocate'; req: number; tokens: number[] }
  | { op: 'append'; req: number; extra: number }
  | { op: 'commit'; req: number }
  | { op: 'fork'; parent: number; child: number; back: number }
  | { op: 'preempt'; req: number }
  | { op: 'truncate'; req: number; drop: number }
  | { op: 'free'; req: number };

const tokenArb = fc.integer({ min: 0, max: 3 }); // few distinct tokens: many prefix hits
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('allocate' as const), req: fc.integer({ min: 0, max: 7 }), tokens: fc.array(tokenArb, { minLength: 1, maxLength: 20 }) }),
  fc.record({ op: fc.constant('append' as const), req: fc.integer({ min: 0, max: 7 }), extra: fc.integer({ min: 1, max: 9 }) }),
  fc.record({ op: fc.constant('commit' as const), req: fc.integer({ min: 0, max: 7 }) }),
  // back: a fork of fewer tokens than the parent covers (n > 1 forks the prompt of a leader whose table also holds draft slots).
  fc.record({ op: fc.constant('fork' as const), parent: fc.integer({ min: 0, max: 7 }), child: fc.integer({ min: 0, max: 7 }), back: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ op: fc.constant('preempt' as const), req: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant('truncate' as const), req: fc.integer({ min: 0, max: 7 }), drop: fc.integer({ min: 0, max: 9 }) }),
  fc.record({ op: fc.constant('free' as const), req: fc.integer({ min: 0, max: 7 }) }),
);

function poolSets(): PoolSpec[][] {
  return [
    [{ name: 'attention', blockSize: BLOCK, numBlocks: 12 }],
    [
      { name: 'attention', blockSize: BLOCK, numBlocks: 14 },
      { name: 'state', blockSize: Infinity, numBlocks: 5 },
      { name: 'checkpoints', blockSize: BLOCK * 4, numBlocks: 6 },
    ],
    // A hybrid model with checkpoints: prefix hits resume from them (K6).
    [
      { name: 'attention', blockSize: BLOCK, numBlocks: 14 },
      { name: 'state', blockSize: Infinity, numBlocks: 5 },
      { name: 'checkpoints', blockSize: BLOCK * 2, numBlocks: 6, checkpoints: true },
    ],
  ];
}

/**
 * Operations the model-based test runs in all: 10^5 by default (CI);
 * `npm run fuzz` sets WEFT_FUZZ_OPS=10000000.
 */
const FUZZ_OPS = Number(process.env.WEFT_FUZZ_OPS ?? 1e5);
/** Operations run so far (sequences are up to 60 long, 30 on average). */
let operations = 0;

function runModel(specs: PoolSpec[], prefixCaching: boolean, ops: Op[]): void {
  const kv = new KvCacheManager(specs, { prefixCaching });
  // The model: each live request's tokens and how many are "computed" (covered by its tables).
  const live = new Map<number, { tokens: number[]; covered: number; ownCheckpointsFrom: number }>();
  const capacity = specs.map((spec) => spec.numBlocks - 1);
  // The backend's side of checkpoints: what each checkpoint block holds (the tokens whose state it is),
  // written only into a request's own blocks as its tokens are computed. A block handed out again
  // keeps its old content until rewritten, so a stale hit would show (K6).
  const cp = specs.findIndex((spec) => spec.checkpoints === true);
  const interval = cp >= 0 ? specs[cp]!.blockSize : 0;
  const content = new Map<number, string>();
  // The backend's side of attention blocks: the token each slot's K/V was computed for (-1: never written).
  // Written by 'commit' into a request's own table; a prefix hit must find exactly its tokens there (K4, K7).
  const slots = new Map<number, number[]>();
  const slotsOf = (block: number): number[] => {
    let held = slots.get(block);
    if (held === undefined) slots.set(block, (held = new Array<number>(BLOCK).fill(-1)));
    return held;
  };
  // The backend computes a request's covered tokens: their K/V land in its table's slots.
  const write = (req: number): void => {
    const request = live.get(req)!;
    const table = kv.blockTable(req);
    for (let t = 0; t < request.covered; t++) {
      const block = table[Math.floor(t / BLOCK)]!;
      const held = slotsOf(block);
      if (held[t % BLOCK] === request.tokens[t]) continue;
      // Rewriting a slot of a block someone else holds would change their K/V (K4).
      expect(kv.pools[0]!.refCount(block), `K4: request ${req} rewrites shared block ${block}`).toBe(1);
      held[t % BLOCK] = request.tokens[t]!;
    }
  };
  // Token sequences rolled back by truncate: after every operation, whatever a prompt made of them hits
  // must hold their tokens, so a block rewritten after a roll-back is never found under its old contents.
  const rolledBack: number[][] = [];
  const check = (): void => {
    for (const tokens of rolledBack) {
      kv.findPrefix([...tokens, 0]).blocks.forEach((block, j) =>
        expect(slotsOf(block), 'K7: a prompt hit contents rewritten after a roll-back').toEqual(tokens.slice(j * BLOCK, (j + 1) * BLOCK)),
      );
    }
    kv.checkInvariants(new Map([...live].map(([id, r]) => [id, r.covered])));
    const stats = kv.stats();
    stats.forEach((pool, p) => {
      // No capacity lost: used + free = total, always.
      expect(pool.usedBlocks + pool.freeBlocks).toBe(capacity[p]);
    });
    if (live.size === 0) stats.forEach((pool) => expect(pool.usedBlocks).toBe(0));
  };
  operations += ops.length;
  for (const step of ops) {
    switch (step.op) {
      case 'allocate': {
        const before = kv.stats();
        const hit = kv.findPrefix(step.tokens);
        expect(hit.numTokens).toBeLessThanOrEqual(step.tokens.length - 1);
        if (cp >= 0) {
          expect(hit.checkpoints.length * interval).toBe(hit.numTokens);
          hit.checkpoints.forEach((block, j) => expect(content.get(block), 'K6').toBe(step.tokens.slice(0, (j + 1) * interval).join()));
        }
        // Content check: every block a hit shares holds the K/V of exactly the prompt's tokens there.
        hit.blocks.forEach((block, j) => expect(slotsOf(block), 'K4/K7: a prefix hit found other contents').toEqual(step.tokens.slice(j * BLOCK, (j + 1) * BLOCK)));
        const result = kv.allocate(step.req, hit, step.tokens.length);
        if (live.has(step.req)) {
          expect(result.ok).toBe(false);
        } else if (result.ok) {
          live.set(step.req, { tokens: [...step.tokens], covered: step.tokens.length, ownCheckpointsFrom: hit.checkpoints.length });
        } else {
          expect(result.error.kind).toBe('NoCapacity');
          expect(kv.stats()).toEqual(before); // check-then-mutate: nothing changed
        }
        break;
      }
      case 'append': {
        const request = live.get(step.req);
        const before = kv.stats();
        const target = (request?.covered ?? 0) + step.extra;
        const result = kv.appendSlots(step.req, target);
        if (request === undefined) {
          expect(result.ok).toBe(false);
        } else if (result.ok) {
          for (let i = 0; i < step.extra; i++) request.tokens.push((step.extra + i) % 4);
          request.covered = target;
        } else {
          expect(kv.stats()).toEqual(before);
        }
        break;
      }
      case 'commit': {
        const request = live.get(step.req);
        if (request === undefined) break;
        if (cp >= 0) {
          const table = kv.blockTable(step.req, cp);
          for (let j = request.ownCheckpointsFrom; j < table.length; j++) content.set(table[j]!, request.tokens.slice(0, (j + 1) * interval).join());
        }
        write(step.req);
        kv.cacheComputed(step.req, request.tokens, request.covered);
        break;
      }
      case 'truncate': {
        if (!live.has(step.req)) {
          expect(kv.truncate(step.req, 0)).toMatchObject({ ok: false, error: { kind: 'UnknownRequest' } });
          if (live.size === 0) break;
        }
        // Most requests named are not live: roll back a live one then (after committing it, half the time), so
        // truncation lands on cached blocks often.
        const id = live.has(step.req) ? step.req : [...live.keys()][step.req % live.size]!;
        const request = live.get(id)!;
        if (id !== step.req && step.drop % 2 === 0) {
          write(id);
          kv.cacheComputed(id, request.tokens, request.covered);
        }
        const before = kv.stats();
        const target = Math.max(0, request.covered - step.drop);
        const tail = target % BLOCK === 0 ? undefined : kv.blockTable(id)[Math.floor(target / BLOCK)];
        const result = kv.truncate(id, target);
        if (specs.length > 1) {
          expect(result).toMatchObject({ ok: false, error: { kind: 'NotTruncatable', pool: specs[1]!.name } });
          expect(kv.stats()).toEqual(before);
        } else if (tail !== undefined && kv.pools[0]!.refCount(tail) > 1) {
          expect(result).toMatchObject({ ok: false, error: { kind: 'SharedBlock', block: tail } });
          expect(kv.stats()).toEqual(before);
        } else {
          expect(result.ok).toBe(true);
          if (tail !== undefined) expect(kv.pools[0]!.isCached(tail), 'K7: the partial tail keeps its hash').toBe(false);
          // What comes next differs from what was rolled back, so a stale hash would show as a content mismatch.
          if (target < request.covered) rolledBack.push(request.tokens.slice(0, request.covered));
          if (rolledBack.length > 6) rolledBack.shift();
          request.tokens = request.tokens.slice(0, target);
          request.covered = target;
          // As speculative decoding does: compute other tokens in the rolled-back slots at once.
          if (step.drop % 2 === 1 && kv.appendSlots(id, target + step.drop).ok) {
            for (let i = 0; i < step.drop; i++) request.tokens.push((step.drop + 1 + i) % 4);
            request.covered = target + step.drop;
            write(id);
            kv.cacheComputed(id, request.tokens, request.covered);
          }
        }
        expect(kv.truncate(id, request.covered + BLOCK + 1).ok).toBe(false); // past its table: refused
        break;
      }
      case 'fork': {
        const parent = live.get(step.parent);
        const before = kv.stats();
        if (parent === undefined || live.has(step.child) || step.parent === step.child) {
          if (parent === undefined || live.has(step.child)) expect(kv.fork(step.parent, step.child, 1).ok).toBe(false);
          break;
        }
        write(step.parent); // a fork shares what the parent has computed
        const at = Math.max(0, parent.covered - step.back);
        const result = kv.fork(step.parent, step.child, at);
        if (result.ok) {
          for (const copy of result.value) if (copy.pool === 0) slots.set(copy.dst, [...slotsOf(copy.src)]);
          live.set(step.child, { tokens: parent.tokens.slice(0, at), covered: at, ownCheckpointsFrom: kv.blockTable(step.child, Math.max(cp, 0)).length });
          for (const copy of result.value) expect(copy.src).not.toBe(copy.dst);
        } else {
          expect(kv.stats()).toEqual(before);
        }
        break;
      }
      case 'preempt':
      case 'free': {
        kv.free(step.req);
        kv.free(step.req); // idempotent
        live.delete(step.req);
        break;
      }
    }
    check();
  }
  for (const id of [...live.keys()]) kv.free(id);
  live.clear();
  check();
}

describe('KvCacheManager (model-based properties)', () => {
  it('keeps every invariant over random operation sequences, single and multi pool', () => {
    const combinations = poolSets().length * 2;
    const perCombination = FUZZ_OPS / combinations;
    for (const specs of poolSets()) {
      for (const prefixCaching of [true, false]) {
        const target = operations + perCombination;
        // Rounds of fresh seeds until this combination has run its share.
        while (operations < target) {
          fc.assert(
            fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => runModel(specs, prefixCaching, ops)),
            { numRuns: Math.max(1, Math.min(2000, Math.ceil((target - operations) / 30))) },
          );
        }
      }
    }
    console.log(`KvCacheManager model-based test: ${operations} operations, every invariant checked after each`);
    expect(operations).toBeGreaterThanOrEqual(FUZZ_OPS);
  }, 3_600_000);
});

describe('KvCacheManager (targeted)', () => {
  it('reuses a cached prefix and caps the hit so the last token is computed', () => {
    const kv = new KvCacheManager([{ name: 'attention', blockSize: BLOCK, numBlocks: 10 }], { prefixCaching: true });
    const prompt = [1, 2, 3, 4, 5, 6, 7, 8];
    expect(kv.allocate(1, kv.findPrefix(prompt), 8).ok).toBe(true);
    kv.cacheComputed(1, prompt, 8);
    const same = kv.findPrefix(prompt);
    expect(same.numTokens).toBe(4); // 8 tokens = 2 full blocks, capped at 7 -> 1 block
    const longer = kv.findPrefix([...prompt, 9]);
    expect(longer.blocks).toEqual(kv.blockTable(1).slice(0, 2));
    expect(kv.allocate(2, longer, 9).ok).toBe(true);
    expect(kv.blockTable(2).slice(0, 2)).toEqual(kv.blockTable(1).slice(0, 2));
    kv.free(1);
    kv.free(2);
    // Freed but cached: still findable, and counted as free.
    expect(kv.findPrefix([...prompt, 9]).numTokens).toBe(8);
    expect(kv.stats()[0]!.freeBlocks).toBe(9);
    kv.checkInvariants();
  });

  it('frees tail first so a prefix outlives its tail under eviction', () => {
    const kv = new KvCacheManager([{ name: 'attention', blockSize: 2, numBlocks: 4 }], { prefixCaching: true });
    const tokens = [1, 2, 3, 4, 5, 6];
    expect(kv.allocate(1, kv.findPrefix(tokens), 6).ok).toBe(true);
    kv.cacheComputed(1, tokens, 6);
    kv.free(1);
    // One fresh block needed: the tail block ([5, 6]) is evicted, the prefix [1,2],[3,4] survives.
    expect(kv.allocate(2, kv.findPrefix([9, 9]), 2).ok).toBe(true);
    expect(kv.findPrefix([1, 2, 3, 4, 0]).numTokens).toBe(4);
  });

  it('admits, grows and frees a hybrid request in all pools at once or in none', () => {
    const kv = new KvCacheManager(
      [
        { name: 'attention', blockSize: 4, numBlocks: 100 },
        { name: 'checkpoints', blockSize: 64, numBlocks: 2 }, // one checkpoint block only
      ],
      { prefixCaching: true },
    );
    expect(kv.prefixCaching).toBe(false); // hybrid models cannot restore state from KV blocks
    expect(kv.allocate(1, kv.findPrefix([1]), 60).ok).toBe(true);
    const before = kv.stats();
    const grown = kv.appendSlots(1, 70); // needs a 2nd checkpoint block: none left
    expect(grown.ok).toBe(false);
    if (!grown.ok) expect(grown.error).toMatchObject({ kind: 'NoCapacity', pool: 'checkpoints' });
    expect(kv.stats()).toEqual(before); // the attention pool did not grow alone
    expect(kv.blockTable(1).length).toBe(15);
    const second = kv.allocate(2, kv.findPrefix([1]), 4);
    expect(second.ok).toBe(false);
    expect(kv.has(2)).toBe(false);
    expect(kv.stats()[0]!.usedBlocks).toBe(15); // no attention block leaked for the refused request
    kv.free(1);
    expect(kv.stats().map((pool) => pool.usedBlocks)).toEqual([0, 0]);
    kv.checkInvariants();
  });

  it('fork shares full blocks and copies the partial tail', () => {
    const kv = new KvCacheManager([{ name: 'attention', blockSize: 4, numBlocks: 10 }], { prefixCaching: false });
    expect(kv.allocate(1, kv.findPrefix([1]), 6).ok).toBe(true);
    const forked = kv.fork(1, 2, 6);
    expect(forked.ok).toBe(true);
    const parent = kv.blockTable(1);
    const child = kv.blockTable(2);
    expect(child[0]).toBe(parent[0]);
    expect(child[1]).not.toBe(parent[1]);
    if (forked.ok) expect(forked.value).toEqual([{ pool: 0, src: parent[1], dst: child[1] }]);
    kv.checkInvariants();
  });
});

describe('KvCacheManager.truncate (K7)', () => {
  it('frees whole blocks past the new end, tail first, and unhashes the block that becomes partial', () => {
    const kv = new KvCacheManager([{ name: 'attention', blockSize: 4, numBlocks: 10 }], { prefixCaching: true });
    const tokens = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(kv.allocate(1, kv.findPrefix(tokens), 10).ok).toBe(true);
    kv.cacheComputed(1, tokens, 10); // blocks 0 and 1 full and cached
    const table = [...kv.blockTable(1)];
    expect(kv.truncate(1, 6).ok).toBe(true);
    expect(kv.blockTable(1)).toEqual(table.slice(0, 2));
    expect(kv.stats()[0]!.usedBlocks).toBe(2);
    // Block 1 ([5..8]) now ends partially and will be rewritten: no later prompt may hit it.
    expect(kv.pools[0]!.isCached(table[1]!)).toBe(false);
    expect(kv.findPrefix([1, 2, 3, 4, 5, 6, 7, 8, 0]).numTokens).toBe(4);
    // Rewritten with other tokens and cached again, it is found under its new contents only.
    const rewritten = [1, 2, 3, 4, 5, 6, 70, 80];
    expect(kv.appendSlots(1, 8).ok).toBe(true);
    kv.cacheComputed(1, rewritten, 8);
    expect(kv.findPrefix([...rewritten, 0]).blocks).toEqual(table.slice(0, 2));
    expect(kv.findPrefix([...tokens.slice(0, 8), 0]).numTokens).toBe(4);
    kv.checkInvariants(new Map([[1, 8]]));
  });

  it('refuses, changing nothing: recurrent state, a shared block, past the end, an unknown request', () => {
    const hybrid = new KvCacheManager(
      [
        { name: 'attention', blockSize: 4, numBlocks: 10 },
        { name: 'linear-state', blockSize: Infinity, numBlocks: 3 },
      ],
      { prefixCaching: false },
    );
    expect(hybrid.allocate(1, NO_PREFIX_HIT, 6).ok).toBe(true);
    expect(hybrid.truncate(1, 5)).toEqual({ ok: false, error: { kind: 'NotTruncatable', pool: 'linear-state' } });
    expect(hybrid.blockTable(1).length).toBe(2);

    const kv = new KvCacheManager([{ name: 'attention', blockSize: 4, numBlocks: 10 }], { prefixCaching: true });
    const prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9];
    expect(kv.allocate(1, kv.findPrefix(prompt), 9).ok).toBe(true);
    kv.cacheComputed(1, prompt, 9);
    expect(kv.allocate(2, kv.findPrefix(prompt), 9).ok).toBe(true); // shares blocks 0 and 1
    const before = kv.stats();
    expect(kv.truncate(2, 6)).toMatchObject({ ok: false, error: { kind: 'SharedBlock', block: kv.blockTable(1)[1] } });
    expect(kv.truncate(2, 13)).toMatchObject({ ok: false, error: { kind: 'BeyondEnd' } });
    expect(kv.truncate(3, 1)).toMatchObject({ ok: false, error: { kind: 'UnknownRequest' } });
    expect(kv.stats()).toEqual(before);
    expect(kv.truncate(2, 8).ok).toBe(true); // a block boundary: nothing shared is rewritten
    expect(kv.pools[0]!.isCached(kv.blockTable(1)[1]!)).toBe(true);
    kv.checkInvariants(new Map([[1, 9], [2, 8]]));
  });
});
