/**
 * A set of tokens as a byte trie, in parallel arrays, so that a mask is one
 * depth-first walk that skips every token sharing a rejected prefix.
 */
export class TokenTrie {
  // Node 0 is the root.
  readonly firstChild: Int32Array;
  readonly nextSibling: Int32Array;
  readonly byteOf: Uint8Array;
  /** First token ending at each node (-1: none); more tokens with the same bytes follow in `sameBytes`. */
  readonly tokenAt: Int32Array;
  /** Indexed by token id (`size` entries): the next token with the same bytes, -1 for none. */
  readonly sameBytes: Int32Array;

  /** The trie of `ids` (each with non-empty bytes in `tokenBytes`); `size` bounds the ids. */
  constructor(tokenBytes: readonly (Uint8Array | null)[], ids: readonly number[], size: number) {
    const sorted = [...ids].sort((a, b) => compareBytes(tokenBytes[a]!, tokenBytes[b]!));
    let capacity = 1024;
    let firstChild: Int32Array<ArrayBuffer> = new Int32Array(capacity).fill(-1);
    let nextSibling: Int32Array<ArrayBuffer> = new Int32Array(capacity).fill(-1);
    let byteOf = new Uint8Array(capacity);
    let tokenAt: Int32Array<ArrayBuffer> = new Int32Array(capacity).fill(-1);
    const lastChild: number[] = [-1];
    let nodes = 1;
    const sameBytes = new Int32Array(size).fill(-1);
    // Sorted order: each token shares a prefix with the previous one; `path` holds that prefix's nodes.
    const path: number[] = [0];
    let previous: Uint8Array = new Uint8Array(0);
    for (const id of sorted) {
      const bytes = tokenBytes[id]!;
      let common = 0;
      while (common < bytes.length && common < previous.length && bytes[common] === previous[common]) common++;
      path.length = common + 1;
      for (let d = common; d < bytes.length; d++) {
        if (nodes === capacity) {
          capacity *= 2;
          firstChild = grow(firstChild, capacity, -1);
          nextSibling = grow(nextSibling, capacity, -1);
          tokenAt = grow(tokenAt, capacity, -1);
          const b = new Uint8Array(capacity);
          b.set(byteOf);
          byteOf = b;
        }
        const node = nodes++;
        const parent = path[d]!;
        byteOf[node] = bytes[d]!;
        lastChild[node] = -1;
        if (lastChild[parent] === -1) firstChild[parent] = node;
        else nextSibling[lastChild[parent]!] = node;
        lastChild[parent] = node;
        path.push(node);
      }
      const end = path[bytes.length]!;
      if (tokenAt[end] === -1) tokenAt[end] = id;
      else {
        sameBytes[id] = sameBytes[tokenAt[end]!]!;
        sameBytes[tokenAt[end]!] = id;
      }
      previous = bytes;
    }
    this.firstChild = firstChild.subarray(0, nodes);
    this.nextSibling = nextSibling.subarray(0, nodes);
    this.byteOf = byteOf.subarray(0, nodes);
    this.tokenAt = tokenAt.subarray(0, nodes);
    this.sameBytes = sameBytes;
  }

  get numNodes(): number {
    return this.firstChild.length;
  }
}

function grow(a: Int32Array, capacity: number, fill: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(capacity).fill(fill);
  b.set(a);
  return b;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
