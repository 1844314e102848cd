/**
 * Decode cost against context length: a hybrid model (Qwen3.5: 3 of every 4
 * layers Gated DeltaNet, whose per-sequence state does not grow) against a
 * pure-attention Qwen3 of the same shape (Qwen3-0.6B: hidden 1024, 28 layers,
 * attention heads 16/8 x 128, FFN 3072, vocab 151,936, tied). The hybrid's 21
 * linear layers have 16 key and 16 value heads of 128 (Qwen3.5's), its 7
 * attention layers the same heads as Qwen3's. Random F16 weights, written once
 * to the temp folder (1.2 GB each), quantized to Q8_0 at load.
 *
 *   npm run bench:hybrid-decode [-- --threads N --runs N --steps N]
 *
 * One-stream decode step time at 256 and at 4096 tokens of context (the cache
 * slots already hold that many positions; their content does not change the
 * cost), both models in alternating rounds, medians. The last line is one JSON
 * object with each model's step times and its ratio 4096 / 256.
 */
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend, LINEAR_STATE_POOL } from '../src/backends/cpu/cpu-backend.js';
import { buildBatch } from '../test/native/helpers.js';
import { type TensorSpec, writeRandomF16Model } from './random-f16-model.js';

const args = process.argv.slice(2);
const value = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const threads = Number(value('threads', '2'));
const runs = Number(value('runs', '3'));
const steps = Number(value('steps', '16'));
const CONTEXTS = [256, 4096];
const BLOCK_SIZE = 16;

const H = 1024, LAYERS = 28, HEADS = 16, KV_HEADS = 8, HEAD_DIM = 128, FFN = 3072, VOCAB = 151936;
const LIN_HEADS = 16, LIN_DIM = 128, CONV = 4;
const common = {
  hidden_size: H, num_hidden_layers: LAYERS, num_attention_heads: HEADS, num_key_value_heads: KV_HEADS, head_dim: HEAD_DIM,
  intermediate_size: FFN, vocab_size: VOCAB, max_position_embeddings: 8192, rms_norm_eps: 1e-6, tie_word_embeddings: true,
  torch_dtype: 'float16',
};
const layerTypes = Array.from({ length: LAYERS }, (_, i) => ((i + 1) % 4 === 0 ? 'full_attention' : 'linear_attention'));
const MODELS = {
  qwen3: { architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', ...common, rope_theta: 1e6 },
  qwen35: {
    architectures: ['Qwen3_5ForCausalLM'], model_type: 'qwen3_5_text', ...common, layer_types: layerTypes,
    linear_num_key_heads: LIN_HEADS, linear_num_value_heads: LIN_HEADS, linear_key_head_dim: LIN_DIM, linear_value_head_dim: LIN_DIM,
    linear_conv_kernel_dim: CONV, rope_parameters: { rope_type: 'default', rope_theta: 1e7, partial_rotary_factor: 0.25 },
  },
};

/** The tensors of one model. */
function tensorSpecs(hybrid: boolean): TensorSpec[] {
  const q = HEADS * HEAD_DIM, kv = KV_HEADS * HEAD_DIM, lin = LIN_HEADS * LIN_DIM, conv = 3 * lin;
  const specs: TensorSpec[] = [['model.embed_tokens.weight', [VOCAB, H]]];
  for (let l = 0; l < LAYERS; l++) {
    const p = `model.layers.${l}.`;
    specs.push([`${p}input_layernorm.weight`, [H]], [`${p}post_attention_layernorm.weight`, [H]]);
    if (hybrid && layerTypes[l] === 'linear_attention') {
      const a = `${p}linear_attn.`;
      specs.push([`${a}in_proj_qkv.weight`, [conv, H]], [`${a}in_proj_z.weight`, [lin, H]], [`${a}in_proj_b.weight`, [LIN_HEADS, H]],
        [`${a}in_proj_a.weight`, [LIN_HEADS, H]], [`${a}conv1d.weight`, [conv, 1, CONV]], [`${a}A_log`, [LIN_HEADS]],
        [`${a}dt_bias`, [LIN_HEADS]], [`${a}norm.weight`, [LIN_DIM]], [`${a}out_proj.weight`, [H, lin]]);
    } else {
      const a = `${p}self_attn.`;
      specs.push([`${a}q_proj.weight`, [hybrid ? 2 * q : q, H]], [`${a}k_proj.weight`, [kv, H]], [`${a}v_proj.weight`, [kv, H]],
        [`${a}o_proj.weight`, [H, q]], [`${a}q_norm.weight`, [HEAD_DIM]], [`${a}k_norm.weight`, [HEAD_DIM]]);
    }
    specs.push([`${p}mlp.gate_proj.weight`, [FFN, H]], [`${p}mlp.up_proj.weight`, [FFN, H]], [`${p}mlp.down_proj.weight`, [H, FFN]]);
  }
  specs.push(['model.norm.weight', [H]]);
  return specs;
}

/** A random F16 model, written once; returns its folder. */
function modelFolder(name: keyof typeof MODELS): string {
  return writeRandomF16Model(join(tmpdir(), `weft-bench-${name}-0.6b-f16`), MODELS[name], tensorSpecs(name === 'qwen35'));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Milliseconds per one-stream decode step at `context` tokens of context. */
async function stepMs(backend: CpuBackend, context: number): Promise<number> {
  const blocks = Array.from({ length: Math.ceil((context + steps) / BLOCK_SIZE) }, (_, b) => 1 + b);
  const hybrid = backend.shape.extraPools !== undefined;
  const times: number[] = [];
  for (let s = 0; s < steps; s++) {
    const started = process.hrtime.bigint();
    await backend.execute(buildBatch([{ tokens: [1 + (s % 1000)], pastLen: context + s, blocks, ...(hybrid && { stateSlot: 1 }) }]));
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return median(times);
}

async function main(): Promise<void> {
  const longest = Math.max(...CONTEXTS) + steps;
  const models: Array<{ name: string; backend: CpuBackend; ms: Record<number, number[]> }> = [];
  for (const name of ['qwen3', 'qwen35'] as const) {
    const backend = await CpuBackend.load(modelFolder(name), { threads, quantize: 'q8_0' });
    await backend.allocateCache({
      numBlocks: Math.ceil(longest / BLOCK_SIZE) + 1, blockSize: BLOCK_SIZE, precision: 'f16',
      ...(backend.shape.extraPools && { extraPoolBlocks: { [LINEAR_STATE_POOL]: 2 } }),
    });
    models.push({ name, backend, ms: Object.fromEntries(CONTEXTS.map((c) => [c, [] as number[]])) });
  }
  for (const m of models) await stepMs(m.backend, CONTEXTS[0]!); // warm-up
  for (let r = 0; r < runs; r++)
    for (let i = 0; i < models.length; i++) {
      const m = models[(i + r) % models.length]!;
      for (const c of r % 2 === 0 ? CONTEXTS : [...CONTEXTS].reverse()) m.ms[c]!.push(await stepMs(m.backend, c));
    }

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`weft decode step vs context: Qwen3-0.6B shape, pure attention vs hybrid (21 Gated DeltaNet + 7 attention layers), random weights as Q8_0`);
  console.log(`CPU: ${cpu} (${cpus().length} logical cores), kernels: ${models[0]!.backend.kernels}, ${threads} threads, ${runs} rounds of ${steps} steps, load average ${loadavg()[0]?.toFixed(2)}`);
  const result: Record<string, number | string> = { cpu, kernels: String(models[0]!.backend.kernels), threads };
  for (const m of models) {
    const [short, long] = CONTEXTS.map((c) => median(m.ms[c]!)) as [number, number];
    console.log(`${m.name.padEnd(7)} step at context ${CONTEXTS[0]}: ${short.toFixed(1)} ms   at ${CONTEXTS[1]}: ${long.toFixed(1)} ms   ratio ${(long / short).toFixed(2)}`);
    result[`${m.name}StepMs${CONTEXTS[0]}`] = Number(short.toFixed(2));
    result[`${m.name}StepMs${CONTEXTS[1]}`] = Number(long.toFixed(2));
    result[`${m.name}Growth`] = Number((long / short).toFixed(3));
  }
  for (const m of models) await m.backend.dispose();
  console.log(JSON.stringify(result));
}

await main();
