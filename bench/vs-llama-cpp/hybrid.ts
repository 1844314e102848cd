/**
 * Hybrid decode, weft against node-llama-cpp 3.21.1 (whose bundled llama.cpp
 * reads GGUF qwen35) on the same file: a Qwen3.5 of the Qwen3-0.6B shape with
 * random weights in Q8_0 (make-model.ts --hybrid; ~0.8 GB, written once).
 *
 *   npm run bench:hybrid-vs-llama-cpp [-- --quick] [-- --threads 2] [-- --runs 1]
 *
 * Each run starts one process per side (side.ts --decode-only), the order
 * alternating between runs: one-stream decode (median of 3 measurements) and
 * the aggregate decode of 16 streams. Prints the CPU, each side's figures and
 * the ratios weft / node-llama-cpp; the last line is one JSON object.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureModel, FULL_HYBRID, QUICK_HYBRID } from './make-model.js';
import { median } from './scenarios.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { quick: { type: 'boolean' }, threads: { type: 'string', default: '2' }, runs: { type: 'string', default: '1' } } });
const shape = values.quick ? QUICK_HYBRID : FULL_HYBRID;
const threads = Number(values.threads), runs = Number(values.runs);
if (!existsSync(join(here, 'node_modules', 'node-llama-cpp')))
  throw new Error('node-llama-cpp is not installed: run `npm install --prefix bench/vs-llama-cpp`');

const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
const model = await ensureModel(shape, 'Q8_0');
type Result = { decode1: number; decode1Runs: number[]; agg16: number; kernels: string; peakRssBytes: number; load: number };
const results: Record<'weft' | 'llama', Result[]> = { weft: [], llama: [] };
for (let r = 0; r < runs; r++) {
  for (const engine of r % 2 === 0 ? (['weft', 'llama'] as const) : (['llama', 'weft'] as const)) {
    const load = loadavg()[0]!;
    process.stderr.write(`bench: run ${r + 1}/${runs} ${engine} (load ${load.toFixed(2)})\n`);
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(here, 'side.ts'), '--engine', engine, '--model', model, '--threads', String(threads), '--vocab', String(shape.merges + 256), '--decode-only'], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24,
    });
    const last = child.stdout.trim().split('\n').pop() ?? '';
    if (child.status !== 0 || !last.startsWith('{')) throw new Error(`${engine} side failed (exit ${child.status})`);
    results[engine].push({ ...(JSON.parse(last) as Omit<Result, 'load'>), load });
  }
}
const med = (engine: 'weft' | 'llama', key: 'decode1' | 'agg16') => median(results[engine].map((x) => x[key]));
const summary = {
  cpu, threads, runs, model: shape.name, type: 'Q8_0',
  weft: { decode1: med('weft', 'decode1'), agg16: med('weft', 'agg16'), kernels: results.weft[0]!.kernels, peakRssMiB: Math.round(results.weft[0]!.peakRssBytes / 2 ** 20) },
  llama: { decode1: med('llama', 'decode1'), agg16: med('llama', 'agg16'), kernels: results.llama[0]!.kernels, peakRssMiB: Math.round(results.llama[0]!.peakRssBytes / 2 ** 20) },
  loads: [...results.weft, ...results.llama].map((x) => Number(x.load.toFixed(2))),
  ratio: { decode1: med('weft', 'decode1') / med('llama', 'decode1'), agg16: med('weft', 'agg16') / med('llama', 'agg16') },
};
console.log(`CPU: ${cpu}, ${threads} threads; ${shape.name} Q8_0 (random weights)`);
console.log(`decode, 1 stream:             weft ${summary.weft.decode1.toFixed(2)} tok/s, node-llama-cpp ${summary.llama.decode1.toFixed(2)} tok/s, ratio ${summary.ratio.decode1.toFixed(2)}`);
console.log(`aggregate decode, 16 streams: weft ${summary.weft.agg16.toFixed(2)} tok/s, node-llama-cpp ${summary.llama.agg16.toFixed(2)} tok/s, ratio ${summary.ratio.agg16.toFixed(2)}`);
console.log(JSON.stringify(summary));
