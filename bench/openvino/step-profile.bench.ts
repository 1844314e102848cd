/**
 * Where one OpenVINO step's time goes, outside infer() and inside it (issue #33's profile).
 *
 *   npx tsx bench/openvino/step-profile.bench.ts --model /tmp/qwen3-0.6b-int8 [--kv u8] [--inference default] [--steps 12]
 *
 * Drives the addon as OpenVinoBackend.execute does (planStepInputs, then OvModel.execute)
 * on synthetic PagedAttention batches, and splits each step with the addon's own clocks
 * (OvModel.lastStepTimings): the JS mapping of the batch, marshalling the arrays
 * (main thread), converting and binding the input tensors, infer(), reading the
 * logits back into the buffer lent to JS, the greedy pick of every row on the worker
 * (argmaxRows, as the engine asks for greedy requests), lending the Float32Array (main
 * thread), and the rest of the wall time: the libuv hop there and back. Last column:
 * what the JS argmax of the same rows costs (the engine's scan when a backend returns
 * no StepResult.argmax, as this one did before). Shapes: decode
 * steps of 1 and 16 sequences at 64 tokens of context, and a 256-token prefill chunk
 * (8 prompts of 32), the chunk weft's and genai's max_num_batched_tokens 256 make.
 * Medians over --steps steps after one warm-up. CPU plugin, 2 threads; the load
 * average is printed: other jobs share these cores.
 */
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { KvPrecision, StepBatch } from '../../src/backends/backend.js';
import { cacheBlockSize, compileProperties, planStepInputs, type InferencePrecision, type OpenVinoBackendOptions } from '../../src/backends/openvino/index.js';
import { loadOpenVinoBinding, type NativeStepTimings } from '../../src/backends/openvino/native-binding.js';
import { argmax } from '../../src/sampling/sampler.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const MODEL = resolve(arg('model', 'models/weft-demo-openvino/f32'));
const KV = arg('kv', 'u8') as KvPrecision;
const INFERENCE = arg('inference', 'default');
const STEPS = Number(arg('steps', '12'));
const OPTIONS: OpenVinoBackendOptions = { kvPrecision: KV, threads: 2, ...(INFERENCE !== 'default' && { inferencePrecision: INFERENCE as InferencePrecision }) };

/** A batch of `seqs` sequences, each `past` tokens in and `tokens` new ones, blocks laid out one sequence after another. */
function batch(seqs: number, past: number, tokens: number, blockSize: number, vocab: number): StepBatch {
  const perSeq = Math.ceil((past + tokens) / blockSize);
  const total = seqs * tokens;
  const inputIds = Int32Array.from({ length: total }, (_, i) => 10 + ((i * 7919) % (vocab - 20)));
  const positions = Int32Array.from({ length: total }, (_, i) => past + (i % tokens));
  const begins = Int32Array.from({ length: seqs + 1 }, (_, i) => i * tokens);
  return {
    inputIds,
    positions,
    pastLens: new Int32Array(seqs).fill(past),
    subsequenceBegins: begins,
    blockIndices: Int32Array.from({ length: seqs * perSeq }, (_, i) => 1 + i),
    blockIndicesBegins: Int32Array.from({ length: seqs + 1 }, (_, i) => i * perSeq),
    maxContextLen: past + tokens,
    // The last token of each sequence is sampled.
    logitsIndices: Int32Array.from({ length: seqs }, (_, i) => (i + 1) * tokens - 1),
  } as StepBatch;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const binding = loadOpenVinoBinding();
  const model = new binding.OvModel();
  const properties = compileProperties('CPU', OPTIONS);
  const info = await model.load(join(MODEL, 'openvino_model.xml'), 'CPU', properties);
  const blockSize = cacheBlockSize(info.inputs);
  const logits = info.outputs.find((p) => p.name === 'logits')!;
  const vocab = logits.shape[logits.shape.length - 1]!;
  await model.allocateCache(1 + 16 * Math.ceil(400 / blockSize));
  const toInputs = planStepInputs(info.inputs, () => undefined);
  console.log(`model ${MODEL}; CPU: ${cpus()[0]?.model} (${cpus().length} logical); OpenVINO ${binding.openvinoVersion}`);
  console.log(`compile properties ${JSON.stringify(properties)}; block ${blockSize} tokens; vocab ${vocab}; ${STEPS} steps per shape, medians; load average ${loadavg()[0]!.toFixed(1)}\n`);
  console.log('step | wall ms | plan | marshal | inputs | infer | logits read | native pick | result | hop | outside infer | JS argmax of the rows');
  const shapes: Array<[string, number, number, number]> = [
    ['decode x1', 1, 64, 1],
    ['decode x16', 16, 64, 1],
    ['prefill 8x32', 8, 0, 32],
  ];
  const report: Record<string, unknown> = { properties, load: loadavg()[0] };
  for (const [label, seqs, past, tokens] of shapes) {
    const b = batch(seqs, past, tokens, blockSize, vocab);
    const rows: Array<NativeStepTimings & { wall: number; plan: number; argmax: number }> = [];
    for (let s = 0; s <= STEPS; s++) {
      const start = performance.now();
      const inputs = toInputs(b);
      const planned = performance.now();
      const { logits: out } = await model.execute(inputs, undefined, new Uint8Array(seqs).fill(1));
      const wall = performance.now() - start;
      const t0 = performance.now();
      for (let r = 0; r < seqs; r++) argmax(out, r * vocab, (r + 1) * vocab);
      const argmaxMs = performance.now() - t0;
      model.releaseLogits(out);
      if (s > 0) rows.push({ ...model.lastStepTimings(), wall, plan: planned - start, argmax: argmaxMs });
    }
    const m = (key: keyof (typeof rows)[number]) => median(rows.map((r) => r[key]));
    const hop = median(rows.map((r) => r.wall - r.plan - r.marshalMs - r.inputsMs - r.inferMs - r.logitsMs - r.pickMs - r.resultMs));
    const outside = median(rows.map((r) => r.wall - r.inferMs));
    const f = (x: number) => x.toFixed(2);
    console.log(`${label} | ${f(m('wall'))} | ${f(m('plan'))} | ${f(m('marshalMs'))} | ${f(m('inputsMs'))} | ${f(m('inferMs'))} | ${f(m('logitsMs'))} | ${f(m('pickMs'))} | ${f(m('resultMs'))} | ${f(hop)} | ${f(outside)} (${((100 * outside) / m('wall')).toFixed(1)}%) | ${f(m('argmax'))}`);
    report[label] = { wall: m('wall'), plan: m('plan'), marshal: m('marshalMs'), inputs: m('inputsMs'), infer: m('inferMs'), logits: m('logitsMs'), pick: m('pickMs'), result: m('resultMs'), hop, outside, argmax: m('argmax') };
  }
  model.dispose();
  console.log(`\nload average at the end ${loadavg()[0]!.toFixed(1)}\n${JSON.stringify(report)}`);
}

await main();
