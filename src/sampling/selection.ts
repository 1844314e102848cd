/**
 * Partial selection for top-k and top-p: which candidates form the best
 * prefix of the order "higher weight first, lower id on ties", without
 * sorting them. Quickselect partitions in place and descends into one side,
 * so a whole 151,936-token vocabulary costs O(n) expected instead of a sort's
 * O(n log n) with a comparator (about 60 ms per request at that size).
 *
 * Both functions rearrange ids[0..n) and weights[0..n) together and return L:
 * afterwards the first L entries (in an order that depends only on the input)
 * are exactly the first L of the sorted order. The order is total (ids differ), so the
 * selected set is the one a full sort would give.
 */

/** The best `k` (k < n). */
export function selectBest(ids: Int32Array, weights: Float64Array, n: number, k: number): number {
  pivotState = PIVOT_SEED;
  let lo = 0;
  let hi = n;
  // Invariant: [0, lo) are all in the best k, [hi, n) all outside it.
  while (hi - lo > 1) {
    const at = partition(ids, weights, lo, hi);
    if (at + 1 === k) return k;
    if (at + 1 > k) hi = at;
    else lo = at + 1;
  }
  return k;
}

/**
 * The shortest best prefix whose weights sum to at least `mass` (top-p: the
 * token that crosses the mass is kept). All n when rounding leaves mass unmet.
 */
export function selectMass(ids: Int32Array, weights: Float64Array, n: number, mass: number): number {
  pivotState = PIVOT_SEED;
  let lo = 0;
  let hi = n;
  let need = mass;
  // Invariant: [0, lo) are in the prefix and weigh mass - need; the prefix ends in [lo, hi].
  while (hi > lo) {
    const at = partition(ids, weights, lo, hi);
    let before = 0;
    for (let i = lo; i < at; i++) before += weights[i]!;
    if (before >= need) {
      hi = at;
      continue;
    }
    need -= before;
    if (weights[at]! >= need) return at + 1;
    need -= weights[at]!;
    lo = at + 1;
  }
  return Math.max(lo, 1);
}

/**
 * Partitions [lo, hi) around a pivot: entries ordered before it come first,
 * then the pivot (its index is returned), then the rest.
 */
function partition(ids: Int32Array, weights: Float64Array, lo: number, hi: number): number {
  const p = lo + (nextPivot() % (hi - lo));
  swap(ids, weights, p, hi - 1);
  const pw = weights[hi - 1]!;
  const pid = ids[hi - 1]!;
  let store = lo;
  for (let i = lo; i < hi - 1; i++) {
    const w = weights[i]!;
    if (w > pw || (w === pw && ids[i]! < pid)) swap(ids, weights, i, store++);
  }
  swap(ids, weights, store, hi - 1);
  return store;
}

function swap(ids: Int32Array, weights: Float64Array, a: number, b: number): void {
  const id = ids[a]!;
  ids[a] = ids[b]!;
  ids[b] = id;
  const w = weights[a]!;
  weights[a] = weights[b]!;
  weights[b] = w;
}

/**
 * Pivot choice: a xorshift stream restarted at every call, so the arrangement
 * of the kept entries (the order the sampler's draw walks them) is a function
 * of the row alone. Same seed, same output, alone or batched, depends on it.
 * Not a request's Rng: the chosen set never depends on pivots, only the time.
 */
const PIVOT_SEED = 0x9e3779b9;
let pivotState = PIVOT_SEED;
function nextPivot(): number {
  pivotState ^= pivotState << 13;
  pivotState ^= pivotState >>> 17;
  pivotState ^= pivotState << 5;
  return pivotState >>> 0;
}
