/**
 * weft against node-llama-cpp 3.21.1 on the same GGUF files, side by side.
 *
 *   npm run bench:vs-llama-cpp [-- --quick] [-- --types F16,Q8_0] [-- --threads 2] [-- --runs 3]
 *
 * The models are written first if missing (make-model.ts: Qwen3-0.6B shape,
 * random weights, a 151,936-entry byte-level BPE vocabulary; --quick: a small
 * shape). Each (format, run) starts one process per side (side.ts), the side
 * order alternating between runs; each figure is the median of the runs. The
 * 1-minute load average is recorded before every process, and a memory
 * bandwidth probe (bandwidth.c) gives the decode bound beside the rates.
 * Writes bench/RESULTS.md (or bench/RESULTS-quick.md), with the text of
 * --notes <file> appended when given (observations made around the run); the last line
 * printed is one JSON object with the ratios (weft / node-llama-cpp).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readGgufFile, ggufModelConfig } from '../../src/model-files/gguf/index.js';
import { ensureModel, FULL, QUICK, type WeightType } from './make-model.js';
import { SHAPES, median, type Measurements } from './scenarios.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: { quick: { type: 'boolean' }, types: { type: 'string', default: 'F16,Q8_0' }, threads: { type: 'string', default: '2' }, runs: { type: 'string', default: '3' }, notes: { type: 'string' } },
});
const shape = values.quick ? QUICK : FULL;
const threads = Number(values.threads);
const runs = Number(values.runs);
const types = values.types!.split(',') as WeightType[];

interface SideResult extends Measurements { engine: string; kernels: string; peakRssBytes: number }
/**
 * One side's process; `bandwidth`: the probe's GB/s at the benchmark's
 * threads, measured just before it (the result's decode1Pairs: around each
 * of its one-stream decode measurements).
 */
type Outcome = { ok: true; result: SideResult; load: number; bandwidth: number } | { ok: false; error: string; load: number; bandwidth: number };
type Run = Extract<Outcome, { ok: true }>;

if (!existsSync(join(here, 'node_modules', 'node-llama-cpp')))
  throw new Error('node-llama-cpp is not installed: run `npm install --prefix bench/vs-llama-cpp` (npm run bench:vs-llama-cpp does)');

/** bandwidth.c's figures: the better of ordinary and huge pages (the bound), and each. */
interface Probe { gbPerSecond: number; plainPages: number; hugePages: number | null }
const probeBinary = join(tmpdir(), `weft-bandwidth-${process.pid}`);
execFileSync('cc', ['-O3', '-pthread', join(here, 'bandwidth.c'), '-o', probeBinary]);
process.on('exit', () => rmSync(probeBinary, { force: true }));
const probe = (t: number) => JSON.parse(execFileSync(probeBinary, [String(t)], { encoding: 'utf8' })) as Probe;
function bandwidth(): Record<number, Probe> {
  const out: Record<number, Probe> = {};
  for (const t of [...new Set([1, threads])]) out[t] = probe(t);
  return out;
}

function runSide(engine: 'weft' | 'llama', model: string, vocab: number): Promise<Outcome> {
  // The machine's bandwidth moves between runs (shared host): each run gets its own bound.
  const bandwidth = probe(threads).gbPerSecond;
  const load = loadavg()[0]!;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'side.ts'), '--engine', engine, '--model', model, '--threads', String(threads), '--vocab', String(vocab), '--probe', probeBinary], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      process.stderr.write(d);
    });
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) resolve({ ok: true, result: JSON.parse(last) as SideResult, load, bandwidth });
      else resolve({ ok: false, error: (stderr.split('\n').find((l) => /^\w*Error: /.test(l)) ?? `exit ${code}`).slice(0, 300), load, bandwidth });
    });
  });
}

const bw = bandwidth();
process.stderr.write(`bench: memory bandwidth ${JSON.stringify(bw)} GB/s by threads\n`);

interface TypeSummary {
  type: WeightType;
  weightBytes: number;
  kvBytes: number;
  weft: Outcome[];
  llama: Outcome[];
}
const summaries: TypeSummary[] = [];
for (const type of types) {
  const model = await ensureModel(shape, type);
  const gguf = readGgufFile(model);
  const config = ggufModelConfig(gguf);
  const weightBytes = [...gguf.tensors.values()].reduce((sum, t) => sum + t.byteLength, 0);
  const kvBytes = 64 * 256 * config.numLayers * config.numKvHeads * config.headDim * 2 * 2; // side.ts: same cells both sides, f16
  const regularVocab = shape.merges + 256;
  const summary: TypeSummary = { type, weightBytes, kvBytes, weft: [], llama: [] };
  for (let r = 0; r < runs; r++) {
    const order: Array<'weft' | 'llama'> = r % 2 === 0 ? ['weft', 'llama'] : ['llama', 'weft'];
    for (const engine of order) {
      process.stderr.write(`bench: ${type} run ${r + 1}/${runs} ${engine} (load ${loadavg()[0]!.toFixed(2)})\n`);
      const outcome = await runSide(engine, model, regularVocab);
      summary[engine].push(outcome);
      if (!outcome.ok) process.stderr.write(`bench: ${engine} failed: ${outcome.error}\n`);
    }
    if (summary.weft.every((o) => !o.ok) && r === 0) process.stderr.write(`bench: weft cannot run ${type}; ${runs - 1} more tries anyway\n`);
  }
  summaries.push(summary);
}

// ---- medians, ratios, report ----
type Metric = (m: SideResult) => number;
const METRICS: Array<[string, Metric, string]> = [
  ['decode, 1 stream', (m) => m.decode1, 'tok/s'],
  ['prefill, 512 tokens', (m) => m.prefill512, 'tok/s'],
  ['aggregate decode, 4 streams', (m) => m.agg['4']!, 'tok/s'],
  ['aggregate decode, 16 streams', (m) => m.agg['16']!, 'tok/s'],
  ['aggregate decode, 64 streams', (m) => m.agg['64']!, 'tok/s'],
  ['TTFT p50, 16 arriving together', (m) => m.ttft16.p50, 'ms'],
  ['TTFT p99, 16 arriving together', (m) => m.ttft16.p99, 'ms'],
  ['peak RSS', (m) => m.peakRssBytes / 2 ** 20, 'MiB'],
];
const med = (outcomes: Outcome[], metric: Metric): number | null => {
  const ok = outcomes.filter((o): o is Run => o.ok);
  return ok.length === 0 ? null : median(ok.map((o) => metric(o.result)));
};
const ratio = (s: TypeSummary | undefined, metric: Metric): number | null => {
  if (!s) return null;
  const a = med(s.weft, metric);
  const b = med(s.llama, metric);
  return a === null || b === null ? null : a / b;
};
const fmt = (x: number | null, digits = 1) => (x === null ? 'n/a' : x.toFixed(digits));
const pctOf = (x: number | null) => (x === null ? null : 100 * x);
/**
 * One run's one-stream decode as a fraction of its bandwidth bound: each
 * measurement against the bandwidth probed right before and right after it
 * (their mean / weight bytes), the median over measurements. A run without
 * those probes is held to the probe taken before the run.
 */
function runFraction(o: Run, weightBytes: number): number {
  const pairs = o.result.decode1Pairs;
  if (!pairs?.length) return o.result.decode1 / ((o.bandwidth * 1e9) / weightBytes);
  return median(pairs.map((p) => p.tokPerSecond / ((((p.bandwidthBefore + p.bandwidthAfter) / 2) * 1e9) / weightBytes)));
}
/** The median over one side's runs of runFraction. */
function boundFraction(s: TypeSummary, engine: 'weft' | 'llama'): number | null {
  const ok = s[engine].filter((o): o is Run => o.ok);
  return ok.length === 0 ? null : median(ok.map((o) => runFraction(o, s.weightBytes)));
}
/** The probes around a run's one-stream decode measurements, for the per-run lines. */
const probesAround = (o: Run) => (o.result.decode1Pairs ?? []).map((p) => `${p.bandwidthBefore}-${p.bandwidthAfter}`).join(', ');
const cpu = cpus()[0]?.model ?? 'unknown CPU';
const flags = (readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '').split(' ');
const features = ['avx2', 'fma', 'f16c', 'avx512f', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16', 'avx_vnni', 'amx_tile', 'amx_int8', 'amx_bf16'].filter((f) => flags.includes(f));
const kernelsOf = (outcomes: Outcome[]) => [...new Set(outcomes.filter((o) => o.ok).map((o) => (o as Run).result.kernels))].join('; ') || 'did not run';
const loads = summaries.flatMap((s) => [...s.weft, ...s.llama].map((o) => o.load));

const lines: string[] = [];
lines.push(`# weft vs node-llama-cpp ${values.quick ? '(quick shape)' : '(Qwen3-0.6B shape)'}`, '');
lines.push(`Written by \`npm run bench:vs-llama-cpp${values.quick ? ' -- --quick' : ''}\` (bench/vs-llama-cpp/run.ts) on ${new Date().toISOString()}.`, '');
lines.push(`- CPU: ${cpu}, ${cpus().length} logical cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; features: ${features.join(', ')}`);
lines.push(`- Model: ${shape.name} (hidden ${shape.hidden}, ${shape.layers} layers, ${shape.heads}/${shape.kvHeads} heads, head_dim ${shape.headDim}, FFN ${shape.ffn}, vocab ${shape.vocab}, tied), random weights, same GGUF file for both sides`);
lines.push(`- Threads: ${threads} on each side (node-llama-cpp: maxThreads and the context's threads); KV cache f16 on both sides, ${64 * 256} cells`);
lines.push(`- Runs: ${runs} per side and format, one process each, alternating order; figures are medians (one-stream decode: in each run, the median of ${SHAPES.decode1Pairs} measurements)`);
lines.push(`- 1-minute load average before each process: ${loads.map((l) => l.toFixed(1)).join(', ')} (it still counts the side that ran just before: ~${threads} when nothing else runs)`);
lines.push(
  `- Memory read bandwidth at the start (bandwidth.c, best of 5 passes, the better of 4 KiB and huge pages): ${Object.entries(bw)
    .map(([t, p]) => `${p.gbPerSecond} GB/s on ${t} thread${t === '1' ? '' : 's'} (4 KiB pages ${p.plainPages}, huge pages ${p.hugePages ?? 'n/a'})`)
    .join(', ')}; measured again before every run, and right before and after each one-stream decode measurement (the mean of those two is that measurement's bound)`,
);
for (const s of summaries) {
  lines.push('', `## ${s.type}`, '');
  const probes = median([...s.weft, ...s.llama].map((o) => o.bandwidth));
  lines.push(`Weights ${(s.weightBytes / 1e9).toFixed(3)} GB; decode bound at ${threads} thread${threads === 1 ? '' : 's'} = bandwidth / weight bytes = ${fmt((probes * 1e9) / s.weightBytes)} tok/s at the runs' median probe (${fmt(probes, 2)} GB/s).`, '');
  lines.push(`- weft kernels: ${kernelsOf(s.weft)}`);
  lines.push(`- node-llama-cpp kernels: ${kernelsOf(s.llama)}`);
  const failures = [...s.weft, ...s.llama].filter((o) => !o.ok) as Array<Extract<Outcome, { ok: false }>>;
  for (const f of new Set(failures.map((f) => f.error))) lines.push(`- failed: ${f}`);
  lines.push('', '| measure | weft | node-llama-cpp | weft / node-llama-cpp |', '|---|---|---|---|');
  for (const [name, metric, unit] of METRICS) lines.push(`| ${name} (${unit}) | ${fmt(med(s.weft, metric))} | ${fmt(med(s.llama, metric))} | ${fmt(ratio(s, metric), 2)} |`);
  const llamaFraction = boundFraction(s, 'llama');
  lines.push('', `weft's one-stream decode is ${fmt(pctOf(boundFraction(s, 'weft')), 0)}% of the bandwidth bound; node-llama-cpp's ${fmt(pctOf(llamaFraction), 0)}% (each one-stream measurement against the mean of the bandwidth probed right before and right after it; the median over measurements, then over runs).`);
  const rss = med(s.weft, (m) => m.peakRssBytes);
  lines.push(`weft's peak RSS is ${fmt(rss === null ? null : rss / (s.weightBytes + s.kvBytes), 2)}x the weight bytes plus its KV cache (${(s.kvBytes / 2 ** 20).toFixed(0)} MiB).`);
  lines.push('', 'Per run (weft | node-llama-cpp), decode1 / prefill512 / agg4 / agg16 / agg64 tok/s:', '');
  for (const engine of ['weft', 'llama'] as const)
    for (const o of s[engine]) lines.push(`- ${engine}: ${o.ok ? [o.result.decode1, o.result.prefill512, o.result.agg['4']!, o.result.agg['16']!, o.result.agg['64']!].map((x) => x.toFixed(1)).join(' / ') : `failed (${o.error})`} (load ${o.load.toFixed(1)}, probe ${o.bandwidth} GB/s${o.ok && o.result.decode1Pairs ? `; decode1 ${o.result.decode1Pairs.map((p) => p.tokPerSecond.toFixed(1)).join(', ')} tok/s between probes ${probesAround(o)} GB/s` : ''})`);
}
const byType = (t: WeightType) => summaries.find((s) => s.type === t);
const fraction = (s: TypeSummary | undefined) => (s ? boundFraction(s, 'weft') : null);
const rssRatio = (s: TypeSummary | undefined) => ratio(s, (m) => m.peakRssBytes);
const json = {
  decodeRatio1Q8: ratio(byType('Q8_0'), (m) => m.decode1),
  decodeRatio1F16: ratio(byType('F16'), (m) => m.decode1),
  aggRatio16Q8: ratio(byType('Q8_0'), (m) => m.agg['16']!),
  prefillRatioQ8: ratio(byType('Q8_0'), (m) => m.prefill512),
  bandwidthFraction1Q8: fraction(byType('Q8_0')),
  rssRatioQ8: rssRatio(byType('Q8_0')),
  aggRatio16F16: ratio(byType('F16'), (m) => m.agg['16']!),
  aggRatio64F16: ratio(byType('F16'), (m) => m.agg['64']!),
  prefillRatioF16: ratio(byType('F16'), (m) => m.prefill512),
  bandwidthFraction1F16: fraction(byType('F16')),
  rssRatioF16: rssRatio(byType('F16')),
  decodeRatio1Q4KM: ratio(byType('Q4_K_M'), (m) => m.decode1),
  aggRatio16Q4KM: ratio(byType('Q4_K_M'), (m) => m.agg['16']!),
  prefillRatioQ4KM: ratio(byType('Q4_K_M'), (m) => m.prefill512),
  bandwidthFraction1Q4KM: fraction(byType('Q4_K_M')),
  rssRatioQ4KM: rssRatio(byType('Q4_K_M')),
  threads,
  shape: shape.name,
  loadAverage: Number(median(loads).toFixed(2)),
};
const resultsFile = join(here, '..', values.quick ? 'RESULTS-quick.md' : 'RESULTS.md');
if (values.notes) lines.push('', readFileSync(values.notes, 'utf8').trim());
// This run's part of the file ends with its JSON line; sections after it belong to other benchmarks and are kept.
const END_OF_RUN = 'Last line of the run:';
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
const runEnd = previous.indexOf('```\n', previous.indexOf(`${END_OF_RUN}\n\n\`\`\`json\n`) + 1);
const others = previous.includes(END_OF_RUN) && runEnd >= 0 ? previous.slice(runEnd + 4) : '';
writeFileSync(resultsFile, `${lines.join('\n')}\n\n${END_OF_RUN}\n\n\`\`\`json\n${JSON.stringify(json)}\n\`\`\`\n${others}`);
process.stderr.write(`bench: wrote ${resultsFile}\n`);
console.log(JSON.stringify(json));
