/**
 * Two builds of the native addon, step by step: the wall and CPU time of the
 * backend's own steps (one native forward pass each, no engine), with both
 * builds loaded at once in two processes that take turns, so that a change of
 * load on a shared machine hits both sides alike.
 *
 *   tsx bench/addon-ab/steps.ts --model file.gguf --before old/weft_native.node [--after new.node]
 *                               [--rounds 5] [--threads 2] [--steps 16]
 *                               [--before-env K=V,...] [--after-env K=V,...]
 *                               [--before-options JSON] [--after-options JSON]
 *
 * Each child (this file with --child) loads the model with its addon
 * (WEFT_NATIVE_PATH) and waits; the parent hands out one kind of work at a
 * time, alternating which side goes first: `decode1` (a 16-token prompt, then
 * --steps one-stream decode steps), `decode16` / `decode64` (16 or 64
 * sequences of 4-token prompts, then --steps decode steps of all of them),
 * `prefill512` (one 512-token prompt). A child answers with its median wall ms per step and the process
 * CPU ms per step (all its threads). The parent prints, per kind, the median
 * over rounds of each side and the median of the per-round ratios
 * before / after (> 1: after is faster), with the load average; the last
 * line is JSON.
 *
 * The two sides may also be one build run two ways: `--before-env` /
 * `--after-env` set environment variables of one child (WEFT_PIN_THREADS=1,
 * WEFT_CPU_KERNELS=avx2), `--before-options` / `--after-options` add
 * CpuBackend.loadGguf options (`{"mmap":true}`). --before defaults to --after then.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    before: { type: 'string' },
    after: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    threads: { type: 'string', default: '2' },
    steps: { type: 'string', default: '16' },
    kinds: { type: 'string', default: 'decode1,decode16,prefill512' },
    'before-env': { type: 'string', default: '' },
    'after-env': { type: 'string', default: '' },
    'before-options': { type: 'string', default: '{}' },
    'after-options': { type: 'string', default: '{}' },
    options: { type: 'string', default: '{}' }, // the child's own (from --before/after-options)
    child: { type: 'boolean' },
  },
});
type Kind = 'decode1' | 'decode16' | 'decode64' | 'prefill512';
interface Answer { wallMs: number; cpuMs: number; kernels: string }
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function child(): Promise<void> {
  const { CpuBackend } = await import('../../src/backends/cpu/cpu-backend.js');
  const { buildBatch } = await import('../../test/native/helpers.js');
  const { promptIds } = await import('../vs-llama-cpp/scenarios.js');
  const backend = await CpuBackend.loadGguf(values.model!, { ...(JSON.parse(values.options!) as object), threads: Number(values.threads) });
  const vocab = backend.config.vocabSize;
  const blockSize = 16, perSeq = 40; // 640 positions per sequence
  await backend.allocateCache({ numBlocks: 64 * perSeq + 1, blockSize, precision: 'f16' }); // pages are touched only where written
  const steps = Number(values.steps);
  let salt = 0;

  interface Seq { ids: number[]; past: number; blocks: number[] }
  // One step of every sequence's pending tokens, greedy; returns its wall and CPU ms.
  async function step(seqs: Seq[]): Promise<[number, number]> {
    const batch = buildBatch(seqs.map((s) => ({ tokens: s.ids.slice(s.past), pastLen: s.past, blocks: s.blocks })));
    const cpu = process.cpuUsage();
    const start = performance.now();
    const result = await backend.execute(batch);
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    seqs.forEach((s, r) => {
      let best = r * vocab;
      for (let i = r * vocab + 1; i < (r + 1) * vocab; i++) if (result.logits[i]! > result.logits[best]!) best = i;
      s.past = s.ids.length;
      s.ids.push(best - r * vocab);
    });
    backend.release(result);
    return [wall, (used.user + used.system) / 1000];
  }
  async function run(kind: Kind): Promise<Answer> {
    salt += 1;
    const prompts =
      kind === 'decode1' ? [promptIds(16, salt, vocab)]
      : kind === 'prefill512' ? [promptIds(512, salt, vocab)]
      : Array.from({ length: kind === 'decode16' ? 16 : 64 }, (_, s) => promptIds(4, 100 * salt + s, vocab));
    const seqs = prompts.map((ids, s) => ({ ids, past: 0, blocks: Array.from({ length: perSeq }, (_, b) => 1 + s * perSeq + b) }));
    const first = await step(seqs); // the prompt(s)
    if (kind === 'prefill512') return { wallMs: first[0], cpuMs: first[1], kernels: backend.kernels ?? '' };
    const walls: number[] = [], cpus: number[] = [];
    for (let i = 0; i < steps; i++) {
      const [w, c] = await step(seqs);
      walls.push(w);
      cpus.push(c);
    }
    return { wallMs: median(walls), cpuMs: median(cpus), kernels: backend.kernels ?? '' };
  }
  await run('decode1'); // warm-up
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  for await (const line of lines) {
    if (line === 'quit') break;
    process.stdout.write(`${JSON.stringify(await run(line as Kind))}\n`);
  }
  await backend.dispose();
}

/** A child process and a way to ask it for one measurement. */
let quitting = false;

/** `K=V,K2=V2` as an object. */
function envPairs(list: string): Record<string, string> {
  return Object.fromEntries(list.split(',').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

function start(addon: string, env: Record<string, string>, options: string): { proc: ChildProcess; ready: Promise<string>; ask: (line: string) => Promise<string> } {
  JSON.parse(options); // a malformed --*-options fails here, not in the child
  const proc = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', '--model', values.model!, '--threads', values.threads!, '--steps', values.steps!, '--options', options], {
    env: { ...process.env, ...env, WEFT_NATIVE_PATH: resolve(addon) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // A child that dies (a load error, a crash) ends the run: its answer would never come.
  proc.on('exit', (code, signal) => {
    if (!quitting) {
      process.stderr.write(`addon-ab: the child for ${addon} exited (${signal ?? `code ${code}`}) before the run ended\n`);
      process.exit(1);
    }
  });
  proc.stdin!.on('error', () => {}); // EPIPE to a dead child: its 'exit' above reports it
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((res) => waiting.push(res));
  const ready = next();
  // Twice on a shared Ice Lake host both children sat idle in their event loops before loading
  // the model (~100 MB resident, never ready); a run that cannot start says so instead of waiting.
  const stuck = setTimeout(() => {
    process.stderr.write(`addon-ab: the child for ${addon} was not ready after 300 s; run again\n`);
    process.exit(1);
  }, 300_000);
  void ready.then(() => clearTimeout(stuck));
  return {
    proc,
    ready,
    ask: async (line) => {
      await ready;
      const answer = next();
      if (line) proc.stdin!.write(`${line}\n`);
      return answer;
    },
  };
}

if (values.child) await child();
else {
  const after = values.after ?? join(here, '..', '..', 'native', 'build', 'Release', 'weft_native.node');
  const addons = { before: values.before ?? after, after };
  // One child at a time: a third time both children, started together, hung before loading (see start).
  const before = start(addons.before, envPairs(values['before-env']!), values['before-options']!);
  await before.ready;
  const sides = { before, after: start(addons.after, envPairs(values['after-env']!), values['after-options']!) };
  await sides.after.ready; // the first round waits for no load
  const kinds = values.kinds!.split(',') as Kind[];
  const got: Record<string, Record<'before' | 'after', Answer[]>> = {};
  const loads: number[] = [];
  for (const kind of kinds) got[kind] = { before: [], after: [] };
  for (let r = 0; r < Number(values.rounds); r++)
    for (const kind of kinds)
      for (const side of (r % 2 ? ['after', 'before'] : ['before', 'after']) as Array<'before' | 'after'>) {
        loads.push(loadavg()[0]!);
        const answer = JSON.parse(await sides[side].ask(kind)) as Answer;
        got[kind]![side].push(answer);
        process.stderr.write(`round ${r + 1} ${kind} ${side}: ${answer.wallMs.toFixed(2)} ms wall, ${answer.cpuMs.toFixed(2)} ms CPU (load ${loads.at(-1)!.toFixed(1)})\n`);
      }
  quitting = true;
  for (const s of Object.values(sides)) s.proc.stdin!.write('quit\n');
  const summary: Record<string, unknown> = { model: values.model, threads: Number(values.threads), kernels: got[kinds[0]!]!.after[0]!.kernels, loadAverage: Number(median(loads).toFixed(2)), sides: { before: { addon: addons.before, env: values['before-env'], options: values['before-options'] }, after: { addon: addons.after, env: values['after-env'], options: values['after-options'] } } };
  for (const kind of kinds) {
    const { before, after } = got[kind]!;
    const figures = (pick: (a: Answer) => number) => ({
      beforeMs: Number(median(before.map(pick)).toFixed(2)),
      afterMs: Number(median(after.map(pick)).toFixed(2)),
      speedup: Number(median(before.map((b, i) => pick(b) / pick(after[i]!))).toFixed(3)),
    });
    summary[kind] = { wall: figures((a) => a.wallMs), cpu: figures((a) => a.cpuMs) };
    console.log(`${kind}: wall ${JSON.stringify((summary[kind] as { wall: unknown }).wall)}, cpu ${JSON.stringify((summary[kind] as { cpu: unknown }).cpu)}`);
  }
  console.log(JSON.stringify(summary));
}
