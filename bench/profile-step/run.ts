/**
 * Where a step's time goes, by instruction counts (valgrind's callgrind:
 * counts, unlike timings, do not move with the load of a shared machine).
 *
 *   npm run profile:step                     # Q8_0, 4 layers, 1 thread, 3 decode steps of each kind
 *   npm run profile:step -- --type Q8_0 --layers 28 --threads 1 --steps 3 --keep --top 8
 *   npm run profile:step -- --from /tmp/weft-profile-step-XXXX --top 8   # a kept run's tables again
 *
 * Writes the Qwen3-0.6B-shape GGUF with random weights (bench/vs-llama-cpp/
 * make-model.ts; hidden 1024, 16/8 heads, head_dim 128, FFN 3072, vocab
 * 151,936, tied) with --layers layers (default 4 instead of 28, so that
 * callgrind, ~50x slower than the CPU, finishes in minutes), runs
 * bench/profile-step/step.ts under `valgrind --tool=callgrind` and prints,
 * for a one-stream decode step, a 16-stream decode step and a 128-token
 * prefill, the instructions by part (parts.ts): weight matmuls in the layers
 * by kernel, the LM head, attention, norms/RoPE/SiLU, quantizing activations,
 * KV cache writes, thread synchronisation, step setup, allocation, copies,
 * and JS (node, V8 and JIT code: building each StepBatch, greedy sampling
 * with the engine's argmax; step.ts says why the Pipeline's own JS is left out).
 *
 * Each step is cut into three callgrind dumps: at the entry of the native
 * forward pass, at the entry of its LM head and at the LM head's return
 * (--dump-before / --dump-after on those functions). So the LM head is
 * measured exactly, as everything that ran between its entry and its return
 * on every thread (callgrind sums the threads into each dump), whatever it
 * calls and whichever thread runs its kernels; the other two dumps (the
 * layers, and the JS between this step and the next forward pass) are split
 * by function name. lm_head is `noinline` in forward.cc for this.
 *
 * valgrind does not emulate AVX-512 (its CPUID hides it), so under callgrind
 * weft runs its avx2 kernel set; the AVX-512 kernels' gain is measured by
 * `npm run bench:float-kernels`. The kernels' names in the table say which ran.
 * A column scales the per-layer parts to the 28 layers of the real shape.
 * With 1 thread (the default) every cost is on the stepping thread; with more,
 * callgrind serialises the threads, so spin-waiting is inflated: read the
 * thread-synchronisation row of a multi-thread run as an upper bound.
 * --top N lists each part's N largest functions, to check what it holds.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureModel, FULL, type WeightType } from '../vs-llama-cpp/make-model.js';
import { add, type CallgrindProfile, readCallgrind } from './callgrind-file.js';
import { chargedToCaller, classify, kernelLabel, type Part, PARTS, weightTypeNames } from './parts.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    // Q8_0 by default: the float kernels (F16/BF16/F32) are FMA loops, and valgrind
    // emulates a ymm vfmadd ~20x slower than a multiply and an add (measured with
    // --tool=none): a 2-layer F16 run takes tens of minutes, a Q8_0 one under one.
    type: { type: 'string', default: 'Q8_0' },
    layers: { type: 'string', default: '4' },
    threads: { type: 'string', default: '1' },
    steps: { type: 'string', default: '3' },
    top: { type: 'string', default: '0' },
    keep: { type: 'boolean' },
    from: { type: 'string' },
  },
});
const top = Number(values.top);
const shape = { ...FULL, layers: Number(values.layers), name: Number(values.layers) === FULL.layers ? FULL.name : `${FULL.name}-${values.layers}l` };

interface Reported { order?: string[]; kernels?: string; type?: string; layers?: number; threads?: string; steps?: number }

/** Runs step.ts under callgrind; its dumps and run.json (what step.ts reported, and the options) go to a new folder. */
async function profile(): Promise<{ out: string; status: number | null }> {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    console.error('valgrind is not installed (Debian/Ubuntu: apt-get install valgrind)');
    process.exit(1);
  }
  const model = await ensureModel(shape, values.type as WeightType);
  const out = mkdtempSync(join(tmpdir(), 'weft-profile-step-'));
  process.stderr.write(`profile-step: ${model}, ${values.threads} thread(s), under callgrind (minutes) ...\n`);
  // The demangled names callgrind matches (* is its wildcard).
  const FORWARD = 'weft::forward(*';
  const LM_HEAD = 'weft::(anonymous namespace)::lm_head(*';
  // Two spellings of one function: callgrind keeps one setting per pattern, so
  // --dump-before and --dump-after on the same pattern would leave only the last.
  const LM_HEAD_AGAIN = '*::lm_head(weft::Model&*';
  const child = spawnSync(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', `--dump-before=${FORWARD}`, `--dump-before=${LM_HEAD}`, `--dump-after=${LM_HEAD_AGAIN}`,
      `--callgrind-out-file=${join(out, 'callgrind.out')}`, `--log-file=${join(out, 'valgrind.log')}`,
      process.execPath, '--import', 'tsx', join(here, 'step.ts'),
      '--model', model, '--threads', String(values.threads), '--steps', String(values.steps), '--vocab', String(FULL.vocab)],
    { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
  );
  const reported: Reported = child.status === 0 ? JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') : {};
  writeFileSync(join(out, 'run.json'), JSON.stringify({ ...reported, type: values.type, layers: Number(values.layers), threads: values.threads, steps: Number(values.steps) }));
  return { out, status: child.status };
}

// --from DIR: the tables again from a kept run's files (no valgrind).
const { out, status } = values.from ? { out: values.from, status: 0 } : await profile();
const reported = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as Reported;
if (values.from) Object.assign(values, { type: reported.type, threads: reported.threads });
const layers = reported.layers ?? Number(values.layers);
const steps = reported.steps ?? Number(values.steps);
const dumps = readdirSync(out).filter((f) => /^callgrind\.out\.\d+$/.test(f)).sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
const order = reported.order ?? [];
// Dumps while instrumented: what ran before the first step (order[0],
// 'before'), then per step its layers (ends at lm_head's entry), its LM head
// (ends at its return) and the JS after it (ends at the next forward pass, or
// at step.ts's last dump).
const stepKinds = order.slice(1);
const wanted = 1 + 3 * stepKinds.length;
const fail = (why: string): never => {
  console.error(`profile-step: ${why} (valgrind exited ${status}; files kept in ${out}, valgrind.log there)`);
  process.exit(1);
};
if (status !== 0 || stepKinds.length === 0 || dumps.length < wanted) fail(`${dumps.length} dumps, ${wanted} expected`);
const used = dumps.slice(dumps.length - wanted).map((f) => join(out, f));
const trigger = (file: string) => /^desc: Trigger: (.*)$/m.exec(readFileSync(file, 'utf8').slice(0, 4096))?.[1] ?? '';
interface Step { layers: CallgrindProfile; lmHead: CallgrindProfile; after: CallgrindProfile }
const stepsRun: Step[] = stepKinds.map((kind, i) => {
  const [a, b, c] = [used[1 + 3 * i]!, used[2 + 3 * i]!, used[3 + 3 * i]!];
  // Checked, so that a renamed lm_head or forward cannot shift the cuts silently.
  if (!trigger(a).startsWith('--dump-before=weft::(anonymous namespace)::lm_head(') || !trigger(b).startsWith('--dump-after=weft::(anonymous namespace)::lm_head('))
    fail(`step ${i} (${kind}): dumps ${a} / ${b} were triggered by "${trigger(a)}" / "${trigger(b)}", not lm_head's entry and return`);
  return { layers: readCallgrind(a), lmHead: readCallgrind(b), after: readCallgrind(c) };
});
const sum = (kind: string): Step => {
  const picked = stepsRun.filter((_, i) => stepKinds[i] === kind);
  return picked.slice(1).reduce((x, y) => ({ layers: add(x.layers, y.layers), lmHead: add(x.lmHead, y.lmHead), after: add(x.after, y.after) }), picked[0]!);
};
const [d1, d16, pre] = [sum('decode1'), sum('decode16'), sum('prefill-128')];
if (!values.keep && !values.from) rmSync(out, { recursive: true });
else if (!values.from) process.stderr.write(`profile-step: callgrind files kept in ${out} (callgrind_annotate works on them)\n`);

interface Breakdown {
  byPart: Map<Part, number>;
  /** Weight matmuls in the layers by kernel function (the LM head's are in lmHeadKernels). */
  kernels: Map<string, number>;
  lmHead: number;
  lmHeadKernels: Map<string, number>;
  /** Per part, its functions (object: name) and their instructions, for --top. */
  functions: Map<Part, Map<string, number>>;
  total: number;
}

/** V8's garbage collector (it runs on its own threads, so in whatever dump it falls). */
const GC = /v8::internal::(\w+::)*\w*(Marking|Marker|Sweep|Scaveng|Evacuat|Heap|GC|Compactor|Remembered|SlotSet)|heap::base|cppgc/;

const bump = <K>(m: Map<K, number>, k: K, v: number) => m.set(k, (m.get(k) ?? 0) + v);

const weightTypes = weightTypeNames(readFileSync(join(here, '../../native/src/cpu/kernels/matmul_types.h'), 'utf8'));
const label = (ob: string, fn: string) => `${ob.split('/').pop()}: ${kernelLabel(fn, weightTypes)}`;

/**
 * Each function's self cost, by part. A libc/libm helper's (memset, expf) goes
 * to its callers, in proportion to the calls' inclusive costs, as the caller's
 * own (`via` names the helper).
 */
function byFunction(p: CallgrindProfile, per: number, each: (part: Part, ob: string, fn: string, ir: number, via?: string) => void): void {
  const helperCallers = new Map<string, Array<[string, string, number]>>(); // helper -> [callerOb, callerFn, inclusive]
  for (const [key, ir] of p.calls) {
    const [ob, fn, cob, cfn] = key.split('\t') as [string, string, string, string];
    if (chargedToCaller(cfn, cob)) {
      const list = helperCallers.get(`${cob}\t${cfn}`) ?? [];
      list.push([ob, fn, ir]);
      helperCallers.set(`${cob}\t${cfn}`, list);
    }
  }
  for (const [key, ir] of p.self) {
    const [ob, fn] = key.split('\t') as [string, string];
    const callers = helperCallers.get(key);
    const into = callers?.reduce((s, c) => s + c[2], 0) ?? 0;
    if (!callers || into === 0) each(classify(fn, ob), ob, fn, ir / per);
    else for (const [cob, cfn, inclusive] of callers) each(classify(cfn, cob), cob, cfn, ((ir / per) * inclusive) / into, kernelLabel(fn));
  }
}

function breakdown(s: Step, per: number): Breakdown {
  const byPart = new Map<Part, number>(PARTS.map((x) => [x.part, 0]));
  const functions = new Map<Part, Map<string, number>>(PARTS.map((x) => [x.part, new Map()]));
  const kernels = new Map<string, number>();
  const charge = (part: Part, ob: string, fn: string, ir: number, via?: string) => {
    bump(byPart, part, ir);
    bump(functions.get(part)!, via ? `${label(ob, fn)} -> ${via}` : label(ob, fn), ir);
  };
  for (const p of [s.layers, s.after])
    byFunction(p, per, (part, ob, fn, ir, via) => {
      charge(part, ob, fn, ir, via);
      if (part === 'matmul') bump(kernels, kernelLabel(fn, weightTypes), ir);
    });
  // The LM head's dump holds what ran on every thread while lm_head ran: its
  // native code (and the libc helpers it called) is the LM head; JS there
  // (V8's garbage collector on its own threads) counts as JS.
  const lmHeadKernels = new Map<string, number>();
  let lmHead = 0;
  byFunction(s.lmHead, per, (part, ob, fn, ir, via) => {
    if (part === 'js') return charge(part, ob, fn, ir, via);
    lmHead += ir;
    if (part === 'matmul') bump(lmHeadKernels, kernelLabel(fn, weightTypes), ir);
  });
  return { byPart, kernels, lmHead, lmHeadKernels, functions, total: (s.layers.total + s.lmHead.total + s.after.total) / per };
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
  const full = PARTS.reduce((s, x) => s + b.byPart.get(x.part)! * (x.perLayer ? scale : 1), 0) + b.lmHead;
  console.log(`| ${name} | M instr | share | share at 28 layers |`);
  console.log('|---|---:|---:|---:|');
  const row = (label: string, v: number, perLayer: boolean) =>
    console.log(`| ${label} | ${M(v)} | ${pct(v, b.total)} | ${pct(v * (perLayer ? scale : 1), full)} |`);
  const sub = (label: string, v: number, perLayer: boolean) => row(`&nbsp;&nbsp;${label}`, v, perLayer);
  const kernelRows = (m: Map<string, number>, perLayer: boolean) => {
    for (const [k, v] of [...m].sort((x, y) => y[1] - x[1])) if (v >= b.total * 0.001) sub(`\`${k}\``, v, perLayer);
  };
  row(PARTS[0]!.label, b.byPart.get('matmul')!, true);
  kernelRows(b.kernels, true);
  row('LM head (final norm + matmul, all it runs)', b.lmHead, false);
  kernelRows(b.lmHeadKernels, false);
  for (const x of PARTS.slice(1)) row(x.label, b.byPart.get(x.part)!, x.perLayer);
  // JIT code has no names under callgrind (hex addresses): the argmax and the batch building.
  const js = [...b.functions.get('js')!];
  sub('of which JIT code (argmax, batch building)', js.filter(([f]) => f.startsWith('???')).reduce((t, [, v]) => t + v, 0), false);
  sub('of which V8\'s garbage collector (its threads)', js.filter(([f]) => GC.test(f)).reduce((t, [, v]) => t + v, 0), false);
  console.log(`| **total** | ${M(b.total)} | 100% | (${M(full)} M) |\n`);
}
if (top > 0)
  for (const [name, b] of scenarios) {
    console.log(`Largest functions per part, ${name} (M instr; "X -> memset": the share of a libc/libm helper that X called):`);
    for (const x of PARTS) {
      const fns = [...b.functions.get(x.part)!].sort((p, q) => q[1] - p[1]).slice(0, top);
      console.log(`  ${x.label}:`);
      for (const [fn, v] of fns) console.log(`    ${M(v).padStart(8)}  ${fn.slice(0, 160)}`);
    }
    console.log('');
  }
