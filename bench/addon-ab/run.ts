/**
 * One GGUF model, two builds of the native addon, CPU time per token: what a
 * kernel change does to whole decode steps and prefill, measured in a way a
 * shared, oversubscribed machine disturbs little (process CPU time with one
 * thread, not wall time). Alternating rounds, one process per (addon, round),
 * medians.
 *
 *   tsx bench/addon-ab/run.ts --model file.gguf --before old/weft_native.node [--after new.node] [--rounds 3] [--threads 1]
 *
 * --after defaults to this checkout's addon (native/build/Release). Each child
 * (this file with --child) loads the model through Pipeline with --threads
 * threads (default 1) and prints {decode1, agg16, prefill512}: CPU ms per
 * generated token (decode: the difference between generating 33 and 1 tokens
 * for the same prompts, so prefill cancels) and per prompt token (512-token
 * prefill), and the same as wall ms (`wall` in the summary: what a change to
 * thread hand-offs or memory streams moves, with more than one thread).
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: { model: { type: 'string' }, before: { type: 'string' }, after: { type: 'string' }, rounds: { type: 'string', default: '3' }, threads: { type: 'string', default: '1' }, child: { type: 'boolean' } },
});
const model = values.model!;
type Figures = { decode1: number; agg16: number; prefill512: number; wall: { decode1: number; agg16: number; prefill512: number }; kernels: string };

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
function ids(count: number, stream: number): number[] {
  let s = (stream * 2654435761 + 12345) >>> 0 || 1;
  return Array.from({ length: count }, () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), 300 + (s % 150000)));
}

async function child(): Promise<void> {
  const { Pipeline } = await import('../../src/index.js');
  const pipe = await Pipeline.create({ model, threads: Number(values.threads), kvCache: { size: 256 * 2 ** 20, precision: 'f16' }, scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 1024 } });
  const gen = (streams: number, prompt: number, tokens: number, salt: number) =>
    Promise.all(Array.from({ length: streams }, (_, s) => pipe.generate(ids(prompt, salt + s), { maxTokens: tokens, temperature: 0, ignoreEos: true })));
  // CPU ms of the call; its wall ms go to `lastWall`.
  let lastWall = 0;
  const cost = async (f: () => Promise<unknown>) => {
    const start = process.cpuUsage();
    const wallStart = performance.now();
    await f();
    lastWall = performance.now() - wallStart;
    return cpuMs(process.cpuUsage(start));
  };
  await gen(1, 8, 4, 999); // warm-up
  const wall = { decode1: 0, agg16: 0, prefill512: 0 };
  const perDecodeToken = async (streams: number, key: 'decode1' | 'agg16') => {
    const one = await cost(() => gen(streams, 16, 1, 10 * streams));
    const oneWall = lastWall;
    const many = await cost(() => gen(streams, 16, 33, 10 * streams + 1000));
    wall[key] = (lastWall - oneWall) / (streams * 32);
    return (many - one) / (streams * 32);
  };
  const decode1 = await perDecodeToken(1, 'decode1');
  const agg16 = await perDecodeToken(16, 'agg16');
  const prefill512 = (await cost(() => gen(1, 512, 1, 7))) / 512;
  wall.prefill512 = lastWall / 512;
  const kernels = String((pipe as unknown as { backend: { kernels?: string } }).backend.kernels ?? 'unknown');
  await pipe.close();
  console.log(JSON.stringify({ decode1, agg16, prefill512, wall, kernels }));
}

if (values.child) await child();
else {
  const addons = { before: values.before!, after: values.after ?? join(here, '..', '..', 'native', 'build', 'Release', 'weft_native.node') };
  const results: Record<'before' | 'after', Figures[]> = { before: [], after: [] };
  const loads: number[] = [];
  for (let r = 0; r < Number(values.rounds); r++)
    for (const side of (r % 2 ? ['after', 'before'] : ['before', 'after']) as Array<'before' | 'after'>) {
      loads.push(loadavg()[0]!);
      const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', '--model', model, '--threads', values.threads!], {
        env: { ...process.env, WEFT_NATIVE_PATH: addons[side] },
        encoding: 'utf8',
      });
      const figures = JSON.parse(out.trim().split('\n').pop()!) as Figures;
      process.stderr.write(`round ${r + 1} ${side}: ${JSON.stringify(figures)} (load ${loads.at(-1)!.toFixed(1)})\n`);
      results[side].push(figures);
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const summary: Record<string, unknown> = { model, kernels: results.after[0]!.kernels, threads: Number(values.threads), loadAverage: median(loads) };
  const compare = (pick: (f: Figures) => number) => {
    const b = median(results.before.map(pick)), a = median(results.after.map(pick));
    return { beforeMs: Number(b.toFixed(2)), afterMs: Number(a.toFixed(2)), speedup: Number((b / a).toFixed(2)) };
  };
  const wall: Record<string, unknown> = {};
  for (const key of ['decode1', 'agg16', 'prefill512'] as const) {
    summary[key] = compare((f) => f[key]);
    wall[key] = compare((f) => f.wall[key]);
  }
  summary.wall = wall;
  console.log(JSON.stringify(summary));
}
