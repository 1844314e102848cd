/**
 * Decode and prefill speed of quantized weights against the same model in F16:
 * weft F16 vs weft Q8_0 (and Q4_0), quantized at load from one F16 file of
 * random weights in the Qwen3-0.6B shape (hidden 1024, 28 layers, 16/8 heads,
 * head_dim 128, FFN 3072, vocab 151,936, tied).
 *
 *   npm run bench:quantized            # Qwen3-0.6B shape (writes a 1.2 GB file to the temp folder once)
 *   npm run bench:quantized -- --quick # a small shape (hidden 512, 4 layers, vocab 32,000)
 *   options: --threads N (default 2), --runs N (default 5), --formats q8_0,q4_0
 *
 * All variants are loaded side by side and measured in alternating rounds (the
 * order rotates each round); each figure is the median of the rounds. Measured:
 * one-stream decode (32 steps at ~64 tokens of context; also as process CPU
 * time per token, which other processes on a shared machine disturb less than
 * wall time, and its ratio F16 / quantized), aggregate decode of 16
 * streams (8 steps), prefill of 128 tokens. Printed with the CPU model, the
 * kernel set, the threads and the 1-minute load average; the last line is one
 * JSON object of the ratios against F16.
 */
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '../src/backends/cpu/cpu-backend.js';
import type { WeightQuantization } from '../src/backends/cpu/quantization.js';
import { buildBatch } from '../test/native/helpers.js';
import { type TensorSpec, writeRandomF16Model } from './random-f16-model.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const value = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const quick = flag('quick');
const threads = Number(value('threads', '2'));
const runs = Number(value('runs', '5'));
const formats = value('formats', 'q8_0').split(',') as WeightQuantization[];

const shape = quick
  ? { hidden_size: 512, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, head_dim: 64, intermediate_size: 1536, vocab_size: 32000 }
  : { hidden_size: 1024, num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, intermediate_size: 3072, vocab_size: 151936 };
const config = {
  architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', ...shape, max_position_embeddings: 4096, rms_norm_eps: 1e-6,
  rope_theta: 1000000, tie_word_embeddings: true, torch_dtype: 'float16',
};

/** The random F16 model, written once; returns its folder. */
function modelFolder(): string {
  const H = shape.hidden_size, d = shape.head_dim, q = shape.num_attention_heads * d, kv = shape.num_key_value_heads * d, I = shape.intermediate_size;
  const specs: TensorSpec[] = [['model.embed_tokens.weight', [shape.vocab_size, H]]];
  for (let l = 0; l < shape.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    specs.push([`${p}input_layernorm.weight`, [H]], [`${p}self_attn.q_proj.weight`, [q, H]], [`${p}self_attn.k_proj.weight`, [kv, H]],
      [`${p}self_attn.v_proj.weight`, [kv, H]], [`${p}self_attn.o_proj.weight`, [H, q]], [`${p}self_attn.q_norm.weight`, [d]],
      [`${p}self_attn.k_norm.weight`, [d]], [`${p}post_attention_layernorm.weight`, [H]], [`${p}mlp.gate_proj.weight`, [I, H]],
      [`${p}mlp.up_proj.weight`, [I, H]], [`${p}mlp.down_proj.weight`, [H, I]]);
  }
  specs.push(['model.norm.weight', [H]]);
  return writeRandomF16Model(join(tmpdir(), `weft-bench-qwen3-${quick ? 'quick' : '0.6b'}-f16`), config, specs);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

interface Variant {
  readonly name: string;
  readonly backend: CpuBackend;
  decode1: number[];
  /** Process CPU milliseconds per one-stream decode token (steadier than wall time on a shared machine). */
  cpu1: number[];
  decode16: number[];
  prefill: number[];
}

/** Tokens per second of wall time, and CPU milliseconds per token. */
async function timeSteps(backend: CpuBackend, seqs: number, pastLen: number, steps: number): Promise<[number, number]> {
  const blocksPer = Math.ceil((pastLen + steps) / 16);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let s = 0; s < steps; s++) {
    await backend.execute(buildBatch(Array.from({ length: seqs }, (_, i) => ({
      tokens: [1 + ((i * 7 + s) % 1000)], pastLen: pastLen + s,
      blocks: Array.from({ length: blocksPer }, (_, b) => 1 + i * blocksPer + b),
    }))));
  }
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return [(seqs * steps) / wall, (used.user + used.system) / 1000 / (seqs * steps)];
}

async function round(v: Variant): Promise<void> {
  const prompt = Array.from({ length: 128 }, (_, i) => 1 + ((i * 31) % 1000));
  const blocks = Array.from({ length: 16 }, (_, b) => 1 + b);
  const started = process.hrtime.bigint();
  await v.backend.execute(buildBatch([{ tokens: prompt, pastLen: 0, blocks }]));
  v.prefill.push(prompt.length / (Number(process.hrtime.bigint() - started) / 1e9));
  // Context ~64 for the decode figures: attention is a small part, as in short chats.
  const [decode1, cpu1] = await timeSteps(v.backend, 1, 64, 32);
  v.decode1.push(decode1);
  v.cpu1.push(cpu1);
  v.decode16.push((await timeSteps(v.backend, 16, 64, 8))[0]);
}

async function main(): Promise<void> {
  const dir = modelFolder();
  const variants: Variant[] = [];
  for (const quantize of [undefined, ...formats]) {
    const backend = await CpuBackend.load(dir, { threads, ...(quantize && { quantize }) });
    await backend.allocateCache({ numBlocks: 16 * 8 + 2, blockSize: 16, precision: 'f16' });
    variants.push({ name: quantize ?? 'f16', backend, decode1: [], cpu1: [], decode16: [], prefill: [] });
  }
  for (const v of variants) await round(v); // warm-up, not counted
  for (const v of variants) v.decode1.length = v.cpu1.length = v.decode16.length = v.prefill.length = 0;
  for (let r = 0; r < runs; r++)
    for (let i = 0; i < variants.length; i++) await round(variants[(i + r) % variants.length] as Variant);

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`weft quantized weights: ${quick ? 'quick shape' : 'Qwen3-0.6B shape'}, random weights, ${threads} threads, ${runs} rounds`);
  console.log(`CPU: ${cpu} (${cpus().length} logical cores), kernels: ${variants[0]?.backend.kernels}, load average ${loadavg()[0]?.toFixed(2)}`);
  const base = variants[0] as Variant;
  const result: Record<string, number | string> = { cpu, kernels: String(base.backend.kernels), threads };
  for (const v of variants) {
    const d1 = median(v.decode1), c1 = median(v.cpu1), d16 = median(v.decode16), pf = median(v.prefill);
    console.log(`${v.name.padEnd(5)} decode 1 stream ${d1.toFixed(1).padStart(7)} tok/s (${c1.toFixed(1)} CPU ms/token)   decode 16 streams ${d16.toFixed(1).padStart(7)} tok/s   prefill 128 ${pf.toFixed(1).padStart(7)} tok/s` +
      (v === base ? '' : `   (x${(d1 / median(base.decode1)).toFixed(2)}, x${(d16 / median(base.decode16)).toFixed(2)}, x${(pf / median(base.prefill)).toFixed(2)} vs f16)`));
    if (v !== base) {
      result[`decodeRatio1_${v.name}`] = Number((d1 / median(base.decode1)).toFixed(3));
      result[`cpuPerTokenRatio1_${v.name}`] = Number((median(base.cpu1) / c1).toFixed(3));
      result[`decodeRatio16_${v.name}`] = Number((d16 / median(base.decode16)).toFixed(3));
      result[`prefillRatio_${v.name}`] = Number((pf / median(base.prefill)).toFixed(3));
    }
    result[`decode1_${v.name}`] = Number(d1.toFixed(2));
  }
  for (const v of variants) await v.backend.dispose();
  console.log(JSON.stringify(result));
}

await main();
