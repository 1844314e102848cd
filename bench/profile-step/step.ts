/**
 * The process that bench/profile-step/run.ts starts under `valgrind
 * --tool=callgrind --instr-atstart=no --dump-before=weft::forward(*`: loads
 * the model through Pipeline (the real engine: scheduler, batch building,
 * greedy sampling, detokenizer), warms up uninstrumented (JIT, cache
 * allocation), switches instrumentation on with callgrind_control, then runs
 * the scenarios one after another. Callgrind dumps a profile at every entry
 * to the native forward pass, so dump k holds step k (the forward pass and
 * everything the JS engine does until the next step begins). The step order
 * is fixed, and printed as JSON on stdout for run.ts:
 *   one request, 12-token prompt, 1 + D tokens   -> 1 prefill step, D one-stream decode steps
 *   16 requests together, 4-token prompts, 1 + D  -> 1 prefill step, D 16-stream decode steps
 *   one request, 128-token prompt, 1 token       -> 1 prefill step
 *
 *   node --import tsx bench/profile-step/step.ts --model file.gguf --threads 1 --steps 3 --vocab 151936
 */
import { execFile } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pipeline } from '../../src/index.js';
import { promptIds } from '../vs-llama-cpp/scenarios.js';

const { values } = parseArgs({
  options: { model: { type: 'string' }, threads: { type: 'string', default: '1' }, steps: { type: 'string', default: '3' }, vocab: { type: 'string' } },
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
  // No prefix caching: every prompt is prefilled.
  scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 2048, prefixCaching: false },
});
const run = (prompt: number[], maxTokens: number) => pipe.generate(prompt, { maxTokens, temperature: 0, ignoreEos: true });
const together = (streams: number, promptTokens: number, maxTokens: number, salt: number) =>
  Promise.all(Array.from({ length: streams }, (_, s) => run(promptIds(promptTokens, salt + s, vocab), maxTokens)));

log('warm-up (uninstrumented)');
await run(promptIds(16, 1, vocab), 3);
await together(16, 4, 3, 100);
await control('--instr=on');
log('decode, 1 stream');
await run(promptIds(12, 2, vocab), 1 + steps);
log('decode, 16 streams');
await together(16, 4, 1 + steps, 200);
log('prefill, 128 tokens');
await run(promptIds(128, 7, vocab), 1);
await control('--dump=end'); // the last step, and the JS after it
await control('--instr=off');
await pipe.close();
// Dump 1 is what ran between switching on and the first step.
const order = ['before', 'prefill-12', ...Array(steps).fill('decode1'), 'prefill-16x4', ...Array(steps).fill('decode16'), 'prefill-128'];
console.log(JSON.stringify({ order }));
log('done');
