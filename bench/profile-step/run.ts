/**
 * Where a step's time goes, by instruction counts (valgrind's callgrind:
 * counts, unlike timings, do not move with the load of a shared machine).
 *
 *   npm run profile:step                     # F16, 4 layers, 1 thread, 3 decode steps of each kind
 *   npm run profile:step -- --type Q8_0 --layers 28 --threads 1 --steps 3 --keep
 *
 * Writes the Qwen3-0.6B-shape GGUF with random weights (bench/vs-llama-cpp/
 * make-model.ts; hidden 1024, 16/8 heads, head_dim 128, FFN 3072, vocab
 * 151,936, tied) with --layers layers (default 4 instead of 28, so that
 * callgrind, ~50x slower than the CPU, finishes in minutes), runs
 * bench/profile-step/step.ts under `valgrind --tool=callgrind` and prints,
 * for a one-stream decode step, a 16-stream decode step and a 128-token
 * prefill, the instructions by part: weight matmuls in the layers by kernel,
 * the LM head, attention, norms/RoPE/SiLU, quantizing activations, KV cache
 * writes, thread synchronisation, allocation, copies, and JS (node, V8 and
 * JIT code: building each StepBatch, greedy sampling with the engine's argmax;
 * step.ts says why the Pipeline's own JS is left out).
 *
 * valgrind does not emulate AVX-512 (its CPUID hides it), so under callgrind
 * weft runs its avx2 kernel set; the AVX-512 kernels' gain is measured by
 * `npm run bench:float-kernels`. The kernels' names in the table say which ran.
 * A column scales the per-layer parts to the 28 layers of the real shape.
 *
 * Functions are matched by name (below), so the table survives kernel changes:
 * a new kernel named rows_* or quant_rows_* is counted as a weight matmul.
 * With 1 thread (the default) every cost is on the stepping thread; with more,
 * callgrind serialises the threads, so spin-waiting is inflated: read the
 * thread-synchronisation row of a multi-thread run as an upper bound.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureModel, FULL, type WeightType } from '../vs-llama-cpp/make-model.js';
import { add, type CallgrindProfile, readCallgrind } from './callgrind-file.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    type: { type: 'string', default: 'F16' },
    layers: { type: 'string', default: '4' },
    threads: { type: 'string', default: '1' },
    steps: { type: 'string', default: '3' },
    keep: { type: 'boolean' },
  },
});
const layers = Number(values.layers);
const steps = Number(values.steps);
const shape = { ...FULL, layers, name: layers === FULL.layers ? FULL.name : `${FULL.name}-${layers}l` };

if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('valgrind is not installed (Debian/Ubuntu: apt-get install valgrind)');
  process.exit(1);
}
const model = await ensureModel(shape, values.type as WeightType);
const out = mkdtempSync(join(tmpdir(), 'weft-profile-step-'));
const base = join(out, 'callgrind.out');
process.stderr.write(`profile-step: ${model}, ${values.threads} thread(s), under callgrind (minutes) ...\n`);
const child = spawnSync(
  'valgrind',
  ['--tool=callgrind', '--instr-atstart=no', '--dump-before=weft::forward(*', `--callgrind-out-file=${base}`, `--log-file=${join(out, 'valgrind.log')}`,
    process.execPath, '--import', 'tsx', join(here, 'step.ts'),
    '--model', model, '--threads', String(values.threads), '--steps', String(steps), '--vocab', String(FULL.vocab)],
  { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
);
const dumps = readdirSync(out).filter((f) => /^callgrind\.out\.\d+$/.test(f)).sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
const reported = child.status === 0 ? (JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as { order?: string[]; kernels?: string }) : {};
const order = reported.order ?? [];
if (child.status !== 0 || order.length === 0 || dumps.length < order.length) {
  console.error(`profile-step: valgrind exited ${child.status} with ${dumps.length} dumps of ${order.length} in ${out} (valgrind.log there says why)`);
  process.exit(1);
}
// The last dumps are the instrumented steps, in step.ts's order.
const profiles = dumps.slice(dumps.length - order.length).map((f) => readCallgrind(join(out, f)));
const sum = (kind: string): CallgrindProfile => {
  const picked = profiles.filter((_, i) => order[i] === kind);
  return picked.slice(1).reduce((a, b) => add(a, b), picked[0]!);
};
const [d1, d16, pre] = [sum('decode1'), sum('decode16'), sum('prefill-128')];
if (!values.keep) rmSync(out, { recursive: true });
else process.stderr.write(`profile-step: callgrind files kept in ${out} (callgrind_annotate works on them)\n`);

/** The parts, in order; a function goes to the first part whose pattern its name matches. */
const PARTS: Array<{ part: string; perLayer: boolean; match: (fn: string, ob: string) => boolean }> = [
  { part: 'weight matmul kernels', perLayer: true, match: (fn) => /\b(k?quant_)?(rows|groups)_\w+|\b(group|k)_(rows|tile|rest)|\brows<|\btile</.test(fn) },
  { part: 'attention', perLayer: true, match: (fn) => /\battend_|\battend_impl|\bload_rows/.test(fn) },
  { part: 'KV cache writes', perLayer: true, match: (fn) => /KvCache::(write_row|copy_block)/.test(fn) },
  { part: 'quantizing activations', perLayer: true, match: (fn) => /quantiz/i.test(fn) },
  { part: 'thread synchronisation', perLayer: true, match: (fn) => /ThreadPool::|spin_until|worker_loop|pthread_cond|pthread_mutex|futex|lll_lock|lll_unlock|sched_yield|condition_variable|this_thread|clock_gettime|steady_clock/.test(fn) },
  { part: 'norms, RoPE, SiLU, residuals (forward.cc)', perLayer: true, match: (fn, ob) => /weft_native/.test(ob) && /rmsnorm|\brope\b|mlp_block|attention_block|weft::forward|\bembed\b|lm_head/.test(fn) || /^(__)?(expf?|sinf?|cosf?|sincosf?)(_\w+)?$|__ieee754|__exp|__sin|__cos/.test(fn) },
  { part: 'other native (step checks, binding, step setup)', perLayer: false, match: (_fn, ob) => /weft_native/.test(ob) },
  { part: 'allocation (malloc/free, all callers)', perLayer: false, match: (fn) => /malloc|\bfree\b|_int_free|cfree|calloc|realloc|memalign|operator new|operator delete|tcache/.test(fn) },
  { part: 'copies (memcpy/memset, all callers)', perLayer: false, match: (fn) => /mem(cpy|move|set)/.test(fn) },
  { part: 'JS (node, V8, JIT code: batch building, greedy sampling)', perLayer: false, match: () => true },
];

interface Breakdown { byPart: Map<string, number>; kernels: Map<string, number>; lmHead: number; total: number }

/** A demangled name without its trailing argument list (and `const`), nested parentheses included. */
function withoutArguments(signature: string): string {
  const end = signature.replace(/\s+const$/, '');
  if (!end.endsWith(')')) return end;
  let depth = 0;
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] === ')') depth++;
    else if (end[i] === '(' && --depth === 0) return end.slice(0, i);
  }
  return end;
}

function breakdown(p: CallgrindProfile, per: number): Breakdown {
  const byPart = new Map<string, number>(PARTS.map((x) => [x.part, 0]));
  const kernels = new Map<string, number>();
  for (const [key, ir] of p.self) {
    const [ob, signature] = key.split('\t') as [string, string];
    // Matched without the argument list: a parameter type (QuantizedInput) must not name the part.
    const fn = withoutArguments(signature);
    const part = PARTS.find((x) => x.match(fn, ob))!.part;
    byPart.set(part, byPart.get(part)! + ir / per);
    if (part === 'weight matmul kernels') {
      const name = fn.replace(/^(void |bool )?weft::(\(anonymous namespace\)::)?/, '');
      kernels.set(name, (kernels.get(name) ?? 0) + ir / per);
    }
  }
  // The LM head: everything lm_head calls (its matmul, with the kernel's share),
  // moved out of the parts it was counted in; mostly the matmul kernel.
  let lmHead = 0;
  for (const [key, ir] of p.calls) {
    const [, caller] = key.split('\t') as [string, string];
    if (/::lm_head\(/.test(caller)) lmHead += ir / per;
  }
  byPart.set('weight matmul kernels', byPart.get('weight matmul kernels')! - lmHead);
  return { byPart, kernels, lmHead, total: p.total / per };
}

const scenarios: Array<[string, Breakdown]> = [
  ['decode, 1 stream (per step)', breakdown(d1, steps)],
  ['decode, 16 streams (per step)', breakdown(d16, steps)],
  ['prefill, 128 tokens', breakdown(pre, 1)],
];
const scale = FULL.layers / layers;
const M = (x: number) => (x / 1e6).toFixed(x >= 1e8 ? 0 : 1);
const pct = (x: number, of: number) => `${((100 * x) / of).toFixed(1)}%`;
console.log(`\nInstructions (callgrind Ir) by part: ${values.type}, ${layers} layers, ${values.threads} thread(s), kernel set ${reported.kernels} (under valgrind); M = millions.`);
console.log(`"28 layers": the per-layer parts times ${scale.toFixed(2)}, the LM head and the rest as measured.\n`);
for (const [name, b] of scenarios) {
  const full = [...PARTS].reduce((s, x) => s + b.byPart.get(x.part)! * (x.perLayer ? scale : 1), 0) + b.lmHead;
  console.log(`| ${name} | M instr | share | share at 28 layers |`);
  console.log('|---|---:|---:|---:|');
  const row = (label: string, v: number, perLayer: boolean) =>
    console.log(`| ${label} | ${M(v)} | ${pct(v, b.total)} | ${pct(v * (perLayer ? scale : 1), full)} |`);
  row('weight matmuls in the layers', b.byPart.get('weight matmul kernels')!, true);
  for (const [k, v] of [...b.kernels].sort((x, y) => y[1] - x[1])) console.log(`| &nbsp;&nbsp;kernel \`${k}\` (LM head included) | ${M(v)} | ${pct(v, b.total)} | |`);
  row('LM head (final norm + matmul)', b.lmHead, false);
  for (const x of PARTS.slice(1)) row(x.part, b.byPart.get(x.part)!, x.perLayer);
  console.log(`| **total** | ${M(b.total)} | 100% | (${M(full)} M) |\n`);
}
