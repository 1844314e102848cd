/**
 * The process that bench/profile-step/run.ts starts under
 * `valgrind --tool=callgrind --instr-atstart=no`: loads the model through
 * Pipeline (the real engine: scheduler, batch building, greedy sampling,
 * detokenizer), runs every scenario once uninstrumented (JIT warm-up, cache
 * allocation), then switches instrumentation on with callgrind_control and
 * dumps one profile per window:
 *   1: decode1 A  one request, 16-token prompt, 1 token   (its prefill)
 *   2: decode1 B  the same, 1 + D tokens                 (B - A = D one-stream decode steps)
 *   3: agg16 A    16 requests together, 1 token each
 *   4: agg16 B    16 requests together, 1 + D tokens each (B - A = D 16-stream decode steps)
 *   5: prefill    one request, 128-token prompt, 1 token
 *
 *   node --import tsx bench/profile-step/step.ts --model file.gguf --threads 1 --steps 8
 */
import { execFile } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pipeline } from '../../src/index.js';
import { promptIds } from '../vs-llama-cpp/scenarios.js';

const { values } = parseArgs({
  options: { model: { type: 'string' }, threads: { type: 'string', default: '1' }, steps: { type: 'string', default: '8' }, vocab: { type: 'string' } },
});
const steps = Number(values.steps);
const vocab = Number(values.vocab);
const log = (line: string) => process.stderr.write(`  [profile-step] ${line}\n`);

/** callgrind_control on this process (valgrind runs in it, so its pid is ours); resolves once callgrind answered. */
function control(arg: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('callgrind_control', [arg, String(process.pid)], (error, stdout) => (error ? reject(new Error(`callgrind_control ${arg}: ${error.message} ${stdout}`)) : resolve())),
  );
}

const pipe = await Pipeline.create({
  model: values.model!,
  threads: Number(values.threads),
  kvCache: { size: 64 << 20, precision: 'f16' },
  // No prefix caching: window B must prefill the prompt window A did.
  scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 2048, prefixCaching: false },
});
const run = (prompt: number[], maxTokens: number) => pipe.generate(prompt, { maxTokens, temperature: 0, ignoreEos: true });
const together = (streams: number, maxTokens: number, salt: number) =>
  Promise.all(Array.from({ length: streams }, (_, s) => run(promptIds(16, salt + s, vocab), maxTokens)));

const windows: Array<[string, () => Promise<unknown>]> = [
  ['decode1-a', () => run(promptIds(16, 1, vocab), 1)],
  ['decode1-b', () => run(promptIds(16, 1, vocab), 1 + steps)],
  ['agg16-a', () => together(16, 1, 100)],
  ['agg16-b', () => together(16, 1 + steps, 100)],
  ['prefill128', () => run(promptIds(128, 7, vocab), 1)],
];
log('warm-up (uninstrumented)');
for (const [, w] of windows) await w();
await control('--instr=on');
for (const [name, w] of windows) {
  log(name);
  await w();
  await control(`--dump=${name}`);
}
await control('--instr=off');
await pipe.close();
log('done');
