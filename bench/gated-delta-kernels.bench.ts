/**
 * The Gated DeltaNet kernels (native/src/cpu/kernels/linear/gated_delta.h) of
 * every kernel set this CPU supports, on Qwen3.5's shapes, through the test
 * hooks: one value head's delta rule (128 x 128 state) over a prefill run of
 * 256 tokens, and the conv + SiLU over 6144 channels (the 0.6B shape's
 * q | k | v), 4 taps. (A one-token call is mostly the hook's copies of its
 * arrays: decode is measured on the model, bench/hybrid-decode.bench.ts.) Sets in alternating rounds, medians; ratios
 * against the baseline set (the portable scalar code) of the same run.
 *
 *   npm run bench:gated-delta-kernels [-- --rounds N]
 */
import { cpus, loadavg } from 'node:os';
import { loadNativeBinding } from '../src/backends/cpu/native-binding.js';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] ?? '') || 15;
const testing = loadNativeBinding().testing;
const sets = testing.supportedKernelSets();

/** Deterministic uniform floats in [lo, hi). */
function uniform(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + ((hi - lo) * s) / 2 ** 32;
  });
}

const DK = 128, DV = 128, C = 6144, K = 4;
function deltaArgs(tokens: number) {
  return {
    dk: DK, dv: DV, tokens, state: uniform(DK * DV, 1, -0.1, 0.1), qkv: uniform(tokens * (2 * DK + DV), 2, -0.09, 0.09),
    logDecay: uniform(tokens, 3, -1, 0), beta: uniform(tokens, 4, 0, 1), split: tokens, columns: DV,
  };
}
const convArgs = (tokens: number) => ({
  channels: C, K, tokens, rows: uniform(tokens * C, 5), taps: uniform(C * K, 6), window: uniform((K - 1) * C, 7), split: tokens, columns: C,
});

const CASES: Array<{ name: string; run: (set: (typeof sets)[number]) => unknown }> = [
  { name: 'delta rule, 1 head x 256 tokens', run: ((a) => (set) => testing.deltaRule(set, a))(deltaArgs(256)) },
  { name: 'conv + SiLU, 6144 channels x 256 tokens', run: ((a) => (set) => testing.convSilu(set, a))(convArgs(256)) },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

console.log(`weft Gated DeltaNet kernels by kernel set (test hooks, one thread), ${rounds} rounds, medians`);
console.log(`CPU: ${cpus()[0]?.model ?? 'unknown CPU'}, sets: ${sets.join(', ')}, load average ${loadavg()[0]?.toFixed(2)}`);
const result: Record<string, Record<string, number>> = {};
for (const c of CASES) {
  const ms: Record<string, number[]> = Object.fromEntries(sets.map((s) => [s, [] as number[]]));
  for (const s of sets) c.run(s); // warm-up
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < sets.length; i++) {
      const s = sets[(i + r) % sets.length]!;
      const started = process.hrtime.bigint();
      c.run(s);
      ms[s]!.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  const base = median(ms.baseline!);
  result[c.name] = {};
  console.log(c.name);
  for (const s of sets) {
    const m = median(ms[s]!);
    result[c.name]![s] = Number(m.toFixed(3));
    console.log(`  ${s.padEnd(11)} ${m.toFixed(3)} ms   ${(base / m).toFixed(2)}x baseline`);
  }
}
console.log(JSON.stringify({ loadAverage: Number(loadavg()[0]?.toFixed(2)), ms: result }));
