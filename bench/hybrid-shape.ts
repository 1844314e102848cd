/**
 * The Qwen3.5 hybrid of the Qwen3-0.6B shape (qwen3-0.6b-shape.ts: hidden 1024,
 * 28 layers, FFN 3072, vocab 151,936, tied) for random-weight benchmark models:
 * 3 of every 4 layers Gated DeltaNet with Qwen3.5's 16 key and 16 value heads of
 * 128 and a 4-tap conv, every fourth gated full attention with Qwen3's heads
 * (16/8 x 128, the query projection doubled for the output gate). Shared by
 * bench/hybrid-decode.bench.ts and bench/hybrid-prefill.bench.ts, so both
 * measure the same pair of models (the folders are written once, 1.2 GB each).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QWEN3_06B_CONFIG, qwen3_06bSpecs } from './qwen3-0.6b-shape.js';
import { type TensorSpec, writeRandomF16Model } from './random-f16-model.js';

const { hidden_size: H, num_hidden_layers: LAYERS, intermediate_size: FFN, vocab_size: VOCAB } = QWEN3_06B_CONFIG;
const { num_attention_heads: HEADS, num_key_value_heads: KV_HEADS, head_dim: HEAD_DIM } = QWEN3_06B_CONFIG;
const LIN_HEADS = 16, LIN_DIM = 128, CONV = 4;

const layerTypes = Array.from({ length: LAYERS }, (_, i) => ((i + 1) % 4 === 0 ? 'full_attention' : 'linear_attention'));

export const QWEN35_06B_CONFIG = {
  ...QWEN3_06B_CONFIG, architectures: ['Qwen3_5ForCausalLM'], model_type: 'qwen3_5_text', rope_theta: undefined, layer_types: layerTypes,
  linear_num_key_heads: LIN_HEADS, linear_num_value_heads: LIN_HEADS, linear_key_head_dim: LIN_DIM, linear_value_head_dim: LIN_DIM,
  linear_conv_kernel_dim: CONV, rope_parameters: { rope_type: 'default', rope_theta: 1e7, partial_rotary_factor: 0.25 },
};

/** The hybrid's tensors: Qwen3's, with the linear layers' in place of attention and the gated query projection. */
export function qwen35_06bSpecs(): TensorSpec[] {
  const q = HEADS * HEAD_DIM, kv = KV_HEADS * HEAD_DIM, lin = LIN_HEADS * LIN_DIM, conv = 3 * lin;
  const specs: TensorSpec[] = [['model.embed_tokens.weight', [VOCAB, H]]];
  for (let l = 0; l < LAYERS; l++) {
    const p = `model.layers.${l}.`;
    specs.push([`${p}input_layernorm.weight`, [H]], [`${p}post_attention_layernorm.weight`, [H]]);
    if (layerTypes[l] === 'linear_attention') {
      const a = `${p}linear_attn.`;
      specs.push([`${a}in_proj_qkv.weight`, [conv, H]], [`${a}in_proj_z.weight`, [lin, H]], [`${a}in_proj_b.weight`, [LIN_HEADS, H]],
        [`${a}in_proj_a.weight`, [LIN_HEADS, H]], [`${a}conv1d.weight`, [conv, 1, CONV]], [`${a}A_log`, [LIN_HEADS]],
        [`${a}dt_bias`, [LIN_HEADS]], [`${a}norm.weight`, [LIN_DIM]], [`${a}out_proj.weight`, [H, lin]]);
    } else {
      const a = `${p}self_attn.`;
      specs.push([`${a}q_proj.weight`, [2 * q, H]], [`${a}k_proj.weight`, [kv, H]], [`${a}v_proj.weight`, [kv, H]],
        [`${a}o_proj.weight`, [H, q]], [`${a}q_norm.weight`, [HEAD_DIM]], [`${a}k_norm.weight`, [HEAD_DIM]]);
    }
    specs.push([`${p}mlp.gate_proj.weight`, [FFN, H]], [`${p}mlp.up_proj.weight`, [FFN, H]], [`${p}mlp.down_proj.weight`, [H, FFN]]);
  }
  specs.push(['model.norm.weight', [H]]);
  return specs;
}

export type BenchModelName = 'qwen3' | 'qwen35';

/** The random F16 folder of one model of the pair, written once to the temp folder. */
export function benchModelFolder(name: BenchModelName): string {
  const dir = join(tmpdir(), `weft-bench-${name}-0.6b-f16`);
  return name === 'qwen35' ? writeRandomF16Model(dir, QWEN35_06B_CONFIG, qwen35_06bSpecs()) : writeRandomF16Model(dir, QWEN3_06B_CONFIG, qwen3_06bSpecs());
}
