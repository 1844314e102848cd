/**
 * Loading a GGUF with its weights memory-mapped (used in place) against
 * reading them into memory (`mmap: false`, what every load did before), in
 * the same run: load time, time of the first step (a mapped weight's pages
 * come in as it is first used), decode speed, RSS after loading, after
 * allocating a KV cache (allocated untouched: it should add almost nothing),
 * and peak RSS, each load in a fresh process. Alternating rounds, medians.
 *
 *   npx tsx bench/model-memory/run.ts [--file model.gguf] [--rounds 3] [--threads 2] [--kv-mib 1024]
 *
 * Default file: bench/vs-llama-cpp's Q8_0 model (Qwen3-0.6B shape; write it
 * with `npx tsx bench/vs-llama-cpp/make-model.ts --type Q8_0`). The file is
 * in the page cache after the first round, for both modes alike.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    file: { type: 'string', default: join(here, '..', 'vs-llama-cpp', '.models', 'qwen3-0.6b-shape-q8_0.gguf') },
    rounds: { type: 'string', default: '3' },
    threads: { type: 'string', default: '2' },
    'kv-mib': { type: 'string', default: '1024' },
  },
});
const file = values.file!;
if (!existsSync(file)) {
  console.error(`${file} is missing: npx tsx bench/vs-llama-cpp/make-model.ts --type Q8_0 (or --file another.gguf)`);
  process.exit(1);
}

interface Side {
  mode: string; loadMs: number; cacheMs: number; firstStepMs: number; decodeMsPerToken: number;
  rssAfterLoad: number; rssAfterCache: number; peakRss: number; weightBytes: { copied: number; mapped: number }; cacheBytes: number; kernels: string;
}

function side(mode: 'mmap' | 'read'): Side {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(here, 'side.ts'), '--mode', mode, '--file', file, '--threads', values.threads!, '--kv-mib', values['kv-mib']!], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as Side;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const runs: Record<'mmap' | 'read', Side[]> = { mmap: [], read: [] };
const loads: number[] = [];
side('read'); // warm the page cache, so both modes read the file from memory
for (let round = 0; round < Number(values.rounds); round++) {
  for (const mode of round % 2 === 0 ? (['read', 'mmap'] as const) : (['mmap', 'read'] as const)) runs[mode].push(side(mode));
  loads.push(loadavg()[0]!);
}
const MiB = 2 ** 20;
const m = (mode: 'mmap' | 'read', f: (s: Side) => number) => median(runs[mode].map(f));
const fileBytes = statSync(file).size;
const weights = runs.read[0]!.weightBytes.copied;
console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'}, kernels ${runs.read[0]!.kernels}, ${values.threads} threads; ${file} (${(fileBytes / MiB).toFixed(0)} MiB, weights ${(weights / MiB).toFixed(0)} MiB)`);
console.log(`${values.rounds} alternating rounds, each load in a fresh process, medians; load average ${median(loads).toFixed(1)}`);
const row = (label: string, f: (s: Side) => number, unit: string, digits = 0) => {
  const r = m('read', f), p = m('mmap', f);
  console.log(`${label.padEnd(34)} read ${r.toFixed(digits).padStart(8)} ${unit}   mmap ${p.toFixed(digits).padStart(8)} ${unit}   (mmap/read ${(p / r).toFixed(2)})`);
};
row('load', (s) => s.loadMs, 'ms');
row('first step (64-token prefill)', (s) => s.firstStepMs, 'ms');
row('load + first step', (s) => s.loadMs + s.firstStepMs, 'ms');
row('decode, 1 stream', (s) => s.decodeMsPerToken, 'ms/token', 1);
row('RSS after load', (s) => s.rssAfterLoad / MiB, 'MiB');
row(`RSS added by a ${values['kv-mib']} MiB KV cache`, (s) => (s.rssAfterCache - s.rssAfterLoad) / MiB, 'MiB');
row('peak RSS', (s) => s.peakRss / MiB, 'MiB');
console.log(`weight bytes mapped with mmap: ${(runs.mmap[0]!.weightBytes.mapped / MiB).toFixed(0)} MiB, copied ${(runs.mmap[0]!.weightBytes.copied / MiB).toFixed(2)} MiB`);
const overhead = (mode: 'mmap' | 'read') => (m(mode, (s) => s.peakRss) - weights) / MiB;
console.log(`peak RSS above the weights (node, JS heap, activations, the few KV pages written): read ${overhead('read').toFixed(0)} MiB, mmap ${overhead('mmap').toFixed(0)} MiB`);
console.log('with read, the page cache holds a second copy of the file outside the process; with mmap the mapped pages are that copy');
console.log(JSON.stringify({ file, read: runs.read, mmap: runs.mmap, loadAverage: median(loads) }));
