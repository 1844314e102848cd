/**
 * One step's sampling of 64 requests at temperature 0.8 / top-p 0.95 over a
 * 151,936-token vocabulary (Qwen's), with random logits (as a random-weight
 * model gives: nearly flat, so nothing is negligible). Peer: the sort-based
 * draw the sampler had before partial selection (kept below, verbatim in
 * behaviour), measured in the same run, alternating, medians.
 * Run: npx tsx bench/sampling-selection.bench.ts
 */

import { cpus } from 'node:os';
import { Sampler } from '../src/sampling/sampler.js';
import { GREEDY } from '../src/sampling/params.js';
import { Rng } from '../src/sampling/rng.js';

const VOCAB = 151_936;
const REQUESTS = 64;
const ROUNDS = 5;
const params = { ...GREEDY, temperature: 0.8, topP: 0.95, seed: 1 };

const rng = new Rng(7);
const logits = new Float32Array(VOCAB * REQUESTS);
for (let i = 0; i < logits.length; i++) logits[i] = rng.next() * 4 - 2;

/** The previous draw: every candidate sorted with a comparator, then top-p cut. */
function sortDraw(row: Float32Array, temperature: number, topP: number, random: Rng): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i]! > max) max = row[i]!;
  const floor = Math.log(1e-10) * temperature + max;
  const ids: number[] = [];
  const weights: number[] = [];
  for (let i = 0; i < row.length; i++) {
    if (row[i]! < floor) continue;
    ids.push(i);
    weights.push(Math.exp((row[i]! - max) / temperature));
  }
  let order = ids.map((_, i) => i);
  order.sort((a, b) => weights[b]! - weights[a]! || ids[a]! - ids[b]!);
  const total = order.reduce((sum, i) => sum + weights[i]!, 0);
  let cumulative = 0;
  let keep = 0;
  while (keep < order.length) {
    cumulative += weights[order[keep]!]!;
    keep++;
    if (cumulative >= topP * total) break;
  }
  order = order.slice(0, keep);
  const kept = order.reduce((sum, i) => sum + weights[i]!, 0);
  let threshold = random.next() * kept;
  for (const i of order) {
    threshold -= weights[i]!;
    if (threshold < 0) return ids[i]!;
  }
  return ids[order[order.length - 1]!]!;
}

function step(kind: 'selection' | 'sort'): number {
  const copy = Float32Array.from(logits);
  const start = performance.now();
  for (let r = 0; r < REQUESTS; r++) {
    if (kind === 'selection') new Sampler(params, []).sample(copy, r * VOCAB, VOCAB);
    else sortDraw(copy.subarray(r * VOCAB, (r + 1) * VOCAB), params.temperature, params.topP, new Rng(1));
  }
  return performance.now() - start;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times = { selection: [] as number[], sort: [] as number[] };
step('selection');
step('sort');
for (let round = 0; round < ROUNDS; round++) {
  times.selection.push(step('selection'));
  times.sort.push(step('sort'));
}
const sel = median(times.selection);
const sort = median(times.sort);
console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} (JS, one thread); ${REQUESTS} requests x ${VOCAB} vocab, T=0.8 top-p 0.95; ${ROUNDS} alternating rounds, medians`);
console.log(`one step's sampling: sort-based ${sort.toFixed(0)} ms, partial selection ${sel.toFixed(0)} ms (${(sort / sel).toFixed(1)}x faster; ${(sel / REQUESTS).toFixed(2)} ms per request)`);
