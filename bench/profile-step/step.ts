/**
 * The process that bench/profile-step/run.ts starts under `valgrind
 * --tool=callgrind --instr-atstart=no --dump-before=weft::forward(*`.
 *
 * It drives the CPU backend the way the engine does, step by step: build the
 * StepBatch (block tables, positions), `backend.execute` (one native forward
 * pass on the libuv thread pool), then greedy sampling with the engine's
 * `argmax` over each row of logits. The Pipeline itself (scheduler, request
 * bookkeeping, detokenizer) is left out: under valgrind its JS turned a
 * 10-minute profile into hours, and its per-step cost is measured without
 * valgrind by `npm run bench:engine` (docs/performance.md, first part).
 *
 * Warm-up runs uninstrumented (JIT, first-touch of buffers, the step buffers
 * grown to every size measured), then instrumentation goes on
 * (callgrind_control) and callgrind dumps a profile at the entry of every
 * native forward pass and at the entry and return of its LM head (run.ts).
 * The step order is printed as JSON on stdout for run.ts:
 *   one sequence, 12-token prompt, then D one-stream decode steps
 *   16 sequences, 4-token prompts each (one step), then D 16-stream decode steps
 *   one sequence, 128-token prompt
 *
 *   node --import tsx bench/profile-step/step.ts --model file.gguf --threads 1 --steps 3 --vocab 151936
 */
import { execFile } from 'node:child_process';
import { parseArgs } from 'node:util';
import { CpuBackend } from '../../src/backends/cpu/cpu-backend.js';
import { argmax } from '../../src/sampling/sampler.js';
import { buildBatch, type SeqStep } from '../../test/native/helpers.js';
import { promptIds } from '../vs-llama-cpp/scenarios.js';

const { values } = parseArgs({
  options: { model: { type: 'string' }, threads: { type: 'string', default: '1' }, steps: { type: 'string', default: '3' }, vocab: { type: 'string' } },
});
const steps = Number(values.steps);
const vocab = Number(values.vocab);
const log = (line: string) => process.stderr.write(`  [profile-step] ${line}\n`);

/** callgrind_control on this process (valgrind runs in it, so its pid is ours); resolves once callgrind answered. */
function control(arg: string): Promise<void> {
  if (process.env.PROFILE_STEP_DRY === '1') return Promise.resolve(); // a run without valgrind, to check the script
  return new Promise((resolve, reject) =>
    execFile('callgrind_control', [arg, String(process.pid)], (error, stdout) => (error ? reject(new Error(`callgrind_control ${arg}: ${error.message} ${stdout}`)) : resolve())),
  );
}

const blockSize = 16;
const backend = await CpuBackend.loadGguf(values.model!, { threads: Number(values.threads) });
await backend.allocateCache({ numBlocks: 16 * 12 + 2, blockSize, precision: 'f16' });

/** Sequences with their tokens so far; each owns 12 blocks (192 positions). */
interface Seq { ids: number[]; past: number; blocks: number[] }
const sequences = (prompts: number[][]): Seq[] =>
  prompts.map((ids, s) => ({ ids, past: 0, blocks: Array.from({ length: 12 }, (_, b) => 1 + s * 12 + b) }));

/** One step: every sequence's pending tokens, then greedy sampling of each logits row. */
async function step(seqs: Seq[]): Promise<void> {
  const batch = buildBatch(seqs.map((s): SeqStep => ({ tokens: s.ids.slice(s.past), pastLen: s.past, blocks: s.blocks })));
  if (process.env.PROFILE_STEP_DEBUG) log(`step: ${batch.inputIds.length} tokens ${batch.inputIds.slice(0, 4).join(",")}`);
  const { logits } = await backend.execute(batch);
  seqs.forEach((s, r) => {
    s.past = s.ids.length;
    s.ids.push(argmax(logits, r * vocab, (r + 1) * vocab)); // the index within the row
  });
}
async function scenario(prompts: number[][], decodeSteps: number): Promise<void> {
  const seqs = sequences(prompts);
  for (let i = 0; i <= decodeSteps; i++) await step(seqs);
}
const one = () => [promptIds(12, 2, vocab)];
const sixteen = () => Array.from({ length: 16 }, (_, s) => promptIds(4, 200 + s, vocab));

log('warm-up (uninstrumented)');
await scenario(one(), 2);
await scenario(sixteen(), 1);
await scenario([promptIds(128, 8, vocab)], 0); // grows the step buffers to their 128-token size (kept between steps)
await control('--instr=on');
log('decode, 1 stream');
await scenario(one(), steps);
log('decode, 16 streams');
await scenario(sixteen(), steps);
log('prefill, 128 tokens');
await scenario([promptIds(128, 7, vocab)], 0);
await control('--dump=end'); // the JS after the last step
await control('--instr=off');
const kernels = backend.kernels;
await backend.dispose();
// The dump before the first step's is what ran between switching on and that step.
const order = ['before', 'prefill-12', ...Array(steps).fill('decode1'), 'prefill-16x4', ...Array(steps).fill('decode16'), 'prefill-128'];
console.log(JSON.stringify({ order, kernels }));
log('done');
