import { CpuBackend } from '../src/backends/cpu/cpu-backend.js';
import { Pipeline } from '../src/create.js';
const model = 'bench/vs-llama-cpp/.models/qwen3-0.6b-shape-q8_0.gguf';
const cases: Record<string, object> = {
  greedy: { temperature: 0 },
  sampled: { temperature: 0.7, topP: 0.9 },
  penalties: { temperature: 0.7, topP: 0.9, repetitionPenalty: 1.1, presencePenalty: 0.2, logprobs: 5 },
};
const which = (process.argv[2] ?? 'greedy,sampled,penalties').split(',');
const rounds = Number(process.argv[3] ?? 3);
const streams = Number(process.argv[4] ?? 16);
const backend = await CpuBackend.loadGguf(model, { threads: 2 });
const tok = await Pipeline.create({ model, threads: 1, kvCache: { size: 8 << 20 } });
const pipe = await Pipeline.create({ backend, tokenizer: tok.tokenizer, kvCache: { size: 512 << 20, precision: 'f16' } });
const res: Record<string, number[]> = {};
for (let r = 0; r < rounds; r++) for (const name of r % 2 ? [...which].reverse() : which) {
  const prompts = Array.from({ length: streams }, (_, s) => Array.from({ length: 16 }, (_, i) => (1000 + 7919 * (r * 31 + s) + 31 * i) % 100_000));
  const t = performance.now();
  const out = await Promise.all(prompts.map((p, s) => pipe.generate(p, { ...cases[name], seed: s, maxTokens: 32, ignoreEos: true })));
  const ms = performance.now() - t;
  (res[name] ??= []).push(out.reduce((a, o) => a + o.tokenIds.length, 0) / ms * 1000);
}
for (const [k, v] of Object.entries(res)) console.log(k, v.map((x) => x.toFixed(1)).join(' '));
await pipe.close(); await tok.close();
