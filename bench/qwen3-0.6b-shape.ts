/**
 * The Qwen3-0.6B shape (hidden 1024, 28 layers, 16/8 heads, head_dim 128, FFN
 * 3072, vocab 151,936, tied) for random-weight benchmark models
 * (random-f16-model.ts): its config.json and tensor list.
 */
import type { TensorSpec } from './random-f16-model.js';

const H = 1024, LAYERS = 28, HEADS = 16, KV_HEADS = 8, HEAD_DIM = 128, FFN = 3072, VOCAB = 151936;

export const QWEN3_06B_CONFIG = {
  architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: H, num_hidden_layers: LAYERS, num_attention_heads: HEADS,
  num_key_value_heads: KV_HEADS, head_dim: HEAD_DIM, intermediate_size: FFN, vocab_size: VOCAB, max_position_embeddings: 8192,
  rms_norm_eps: 1e-6, tie_word_embeddings: true, torch_dtype: 'float16', rope_theta: 1e6,
};

export function qwen3_06bSpecs(): TensorSpec[] {
  const q = HEADS * HEAD_DIM, kv = KV_HEADS * HEAD_DIM;
  const specs: TensorSpec[] = [['model.embed_tokens.weight', [VOCAB, H]]];
  for (let l = 0; l < LAYERS; l++) {
    const p = `model.layers.${l}.`;
    const a = `${p}self_attn.`;
    specs.push([`${p}input_layernorm.weight`, [H]], [`${p}post_attention_layernorm.weight`, [H]]);
    specs.push([`${a}q_proj.weight`, [q, H]], [`${a}k_proj.weight`, [kv, H]], [`${a}v_proj.weight`, [kv, H]],
      [`${a}o_proj.weight`, [H, q]], [`${a}q_norm.weight`, [HEAD_DIM]], [`${a}k_norm.weight`, [HEAD_DIM]]);
    specs.push([`${p}mlp.gate_proj.weight`, [FFN, H]], [`${p}mlp.up_proj.weight`, [FFN, H]], [`${p}mlp.down_proj.weight`, [H, FFN]]);
  }
  specs.push(['model.norm.weight', [H]]);
  return specs;
}
