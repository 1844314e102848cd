/**
 * The native sampling chain's own cost, one row at a time (issue #34): rows of
 * 151,936 logits (Qwen's vocabulary) sampled by testing.sampleRow with each set
 * of row passes this CPU runs (native/src/cpu/sample/exp_rows.h: baseline,
 * avx2, avx512), and by another build of the addon in the same process
 * (--before, e.g. the main checkout's native/build/Release/weft_native.node),
 * with the set it runs here. The hook keeps its buffers across calls as a step's
 * threads do; a build from before that (ABI < 7) allocated them on every call,
 * which its figures include (about a millisecond a row here: compare on the
 * peaked rows, where the chain itself costs little). One thread (the caller's), no model, CPU time
 * (process.cpuUsage), not wall time: what moves least with the host's load. Cases alternate within a round; medians.
 *
 * Rows: `flat` (uniform in [-2, 2): every token a candidate, what a
 * random-weight model gives, the worst case) and `peaked` (a trained model's
 * shape: a few hundred tokens within reach of the top).
 *
 *   npx tsx bench/sampling-rows.bench.ts [--before old/weft_native.node] [--rounds 9]
 * Last line: one JSON object with ms per row per (setting, row, passes) and the ratios.
 */
import { cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { SAMPLING_PARAMS } from '../src/backends/backend.js';
import { loadNativeBinding, type NativeTesting, type SampleKernelsName } from '../src/backends/cpu/native-binding.js';
import { GREEDY, type SamplingParams } from '../src/sampling/params.js';
import { Rng } from '../src/sampling/rng.js';
import { Sampler } from '../src/sampling/sampler.js';

const { values } = parseArgs({ options: { before: { type: 'string' }, rounds: { type: 'string', default: '9' } } });
const ROUNDS = Number(values.rounds);
const VOCAB = 151_936;
const testing = loadNativeBinding().testing;
// The other build is loaded as it is, whatever its ABI version: only its test hooks are called.
const before = values.before ? (createRequire(import.meta.url)(values.before) as { testing: NativeTesting }).testing : undefined;

const SETTINGS: Record<string, Partial<SamplingParams>> = {
  sampled: { temperature: 0.7, topP: 0.9 },
  topK: { temperature: 0.7, topK: 40 },
  penalties: { temperature: 0.7, topP: 0.9, repetitionPenalty: 1.1, presencePenalty: 0.2, logprobs: 5 },
};
const rng = new Rng(5);
const ROWS: Record<string, Float32Array> = {
  flat: Float32Array.from({ length: VOCAB }, () => rng.next() * 4 - 2),
  peaked: Float32Array.from({ length: VOCAB }, (_, i) => (rng.next() + rng.next() + rng.next() - 1.5) * 3 + (i % 509 === 0 ? 25 : 0)),
};
const prompt = Array.from({ length: 48 }, (_, i) => i * 3001);
const none = new Int32Array(0);
const probe = (t: NativeTesting, k: SampleKernelsName) => t.sampleRow(k, Float32Array.of(0), new Float64Array(SAMPLING_PARAMS), none, none, none) !== null;
const kernels = (['baseline', 'avx2', 'avx512'] as const).filter((k) => probe(testing, k));
const best = kernels.at(-1)!;
// The other build's best: an older one knows no 'avx512' (it throws), so ask in order.
const beforeKernel = before ? (['avx2', 'baseline'] as const).find((k) => probe(before, k)) : undefined;

interface Side {
  name: string;
  run(row: Float32Array, p: Float64Array, seen: Int32Array): number;
}
const sides: Side[] = kernels.map((k) => ({ name: k, run: (row, p, seen) => testing.sampleRow(k, row, p, seen, none, none)!.token }));
if (before && beforeKernel) sides.push({ name: `before/${beforeKernel}`, run: (row, p, seen) => before.sampleRow(beforeKernel, row, p, seen, none, none)!.token });

/** CPU µs this process has run (getrusage: exact sums, unlike schedstat's tick-rounded ones); only this thread works here. */
const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const REPEAT = 4;  // calls per sample: a sample of ~10 ms
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times = new Map<string, number[]>();
for (let round = 0; round < ROUNDS + 1; round++) {
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  for (const [setting, options] of Object.entries(SETTINGS))
    for (const [rowName, row] of Object.entries(ROWS)) {
      const sampler = new Sampler({ ...GREEDY, ...options, seed: round } as SamplingParams, prompt);
      const p = new Float64Array(SAMPLING_PARAMS);
      sampler.writeParams(p, 0);
      const seen = Int32Array.from(sampler.seenTokens);
      const tokens = new Set<number>();
      for (const side of order) {
        const t = cpuUs();
        for (let i = 0; i < REPEAT; i++) tokens.add(side.run(row, p, seen));
        const ms = (cpuUs() - t) / 1e3 / REPEAT;
        if (round > 0) times.set(`${setting}/${rowName}/${side.name}`, [...(times.get(`${setting}/${rowName}/${side.name}`) ?? []), ms]);
      }
      // Every set of passes and the other build: one token (the bench checks what it times).
      if (tokens.size !== 1) throw new Error(`${setting}/${rowName}: the sides chose different tokens ${[...tokens].join(', ')}`);
    }
}
const ms = Object.fromEntries([...times].map(([key, xs]) => [key, median(xs)]));
console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'}; row passes ${kernels.join(', ')}${beforeKernel ? `; before: ${values.before} with ${beforeKernel}` : ''}; ${ROUNDS} alternating rounds, medians; load average ${loadavg()[0]!.toFixed(1)}`);
const ratios: Record<string, number> = {};
for (const setting of Object.keys(SETTINGS))
  for (const rowName of Object.keys(ROWS)) {
    const cell = (side: string) => ms[`${setting}/${rowName}/${side}`]!;
    const parts = sides.map((s) => `${s.name} ${cell(s.name).toFixed(3)}`);
    if (kernels.includes('avx2')) ratios[`${setting}/${rowName}/${best}OverAvx2`] = cell('avx2') / cell(best);
    if (beforeKernel) ratios[`${setting}/${rowName}/${best}OverBefore`] = cell(`before/${beforeKernel}`) / cell(best);
    console.log(`  ${`${setting}, ${rowName}:`.padEnd(20)} ${parts.join(' ms, ')} ms${beforeKernel ? `; before / ${best} ${ratios[`${setting}/${rowName}/${best}OverBefore`]!.toFixed(2)}x` : ''}`);
  }
console.log(JSON.stringify({ cpu: cpus()[0]?.model, kernels, before: beforeKernel && values.before, ms, ratios, loadAverage: loadavg()[0] }));
