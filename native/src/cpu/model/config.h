// The model's hyperparameters, as the binding reads them from JavaScript.
#pragma once
#include <vector>

#include "kernels/matmul_types.h"

namespace weft {

struct ModelConfig {
  int hidden = 0;        // residual stream width
  int layers = 0;
  int heads = 0;         // query heads
  int kv_heads = 0;      // key/value heads (GQA: heads % kv_heads == 0)
  int head_dim = 0;      // may differ from hidden / heads (Qwen3)
  int intermediate = 0;  // MLP width
  int vocab = 0;
  float rms_eps = 1e-6f;
  bool qkv_bias = false;        // Qwen2, or attention_bias
  bool o_bias = false;          // attention_bias on Llama-family models
  bool qk_norm = false;         // Qwen3: RMSNorm over each head of q and k, before RoPE
  bool tied_embeddings = false;  // LM head = token embedding matrix
  int sliding_window = 0;       // 0 = full attention; else a token attends to the last N positions
  std::vector<double> inv_freq;  // [rotary_dim / 2] RoPE frequencies, scaling already applied
  int rotary_dim = 0;            // leading dims of each head that RoPE rotates (partial RoPE); head_dim if not set

  // Hybrid models (Qwen3.5): Gated DeltaNet layers among the attention layers.
  // linear_layer[l] is true for a linear-attention layer; such a layer keeps no
  // KV rows, but a fixed per-sequence state (linear_state.h). Empty: none.
  std::vector<bool> linear_layer;
  int lin_key_heads = 0, lin_value_heads = 0;  // value heads a multiple of key heads
  int lin_key_dim = 0, lin_value_dim = 0;      // per head
  int conv_kernel = 0;                         // causal depthwise conv taps (4)
  bool attn_output_gate = false;  // q_proj yields per head [query | gate]; attention out *= sigmoid(gate)
  bool norm_plus_one = false;     // RMSNorm weights stored zero-centred, applied as (1 + w): added at load
  // Qwen3-Next: the Gated DeltaNet's four input projections fused into two,
  // grouped by key head (in_proj_qkvz, in_proj_ba; tools/hybrid/NOTES.md
  // section 2), split into q | k | v, z, b and a after the matmul.
  bool fused_linear_proj = false;

  // Sparse mixture-of-experts feed-forward (Qwen3-Next): moe_layer[l] is true
  // for a layer whose MLP routes each token to its experts_per_token most
  // probable of `experts` experts (softmax, then top-k, renormalised with
  // norm_topk_prob) and adds a shared expert scaled by a sigmoid gate
  // (shared_intermediate 0: none). Empty: every layer is dense.
  std::vector<bool> moe_layer;
  int experts = 0, experts_per_token = 0;
  int expert_intermediate = 0;  // one expert's MLP width
  int shared_intermediate = 0;  // the shared expert's
  bool norm_topk_prob = false;

  bool is_linear(int layer) const { return !linear_layer.empty() && linear_layer[layer]; }
  bool is_moe(int layer) const { return !moe_layer.empty() && moe_layer[layer]; }
  bool has_moe() const {
    for (bool b : moe_layer)
      if (b) return true;
    return false;
  }
  int linear_layers() const {
    int n = 0;
    for (bool b : linear_layer) n += b;
    return n;
  }
  // A layer's index among the layers of its kind: its KV cache layer (attention)
  // or its part of a state slot (linear).
  int index_in_kind(int layer) const {
    int n = 0;
    for (int l = 0; l < layer; ++l) n += is_linear(l) == is_linear(layer);
    return n;
  }
  // Layers that keep attention KV rows (the KV cache's layer count).
  int attention_layers() const { return layers - linear_layers(); }
  int lin_key_total() const { return lin_key_heads * lin_key_dim; }
  int lin_value_total() const { return lin_value_heads * lin_value_dim; }
  // Channels of the conv (and of in_proj_qkv): q, k, v.
  int conv_dim() const { return 2 * lin_key_total() + lin_value_total(); }
  // A bidirectional encoder (BERT family, encoder.cc) instead of a decoder:
  // learned absolute position and token-type embeddings, post-norm LayerNorm
  // (weight and bias, eps layer_norm_eps), biases on every projection, a
  // non-gated MLP (up_proj, activation, down_proj) and no final norm or LM
  // head. Every token of a sequence attends to every other, so a sequence is
  // computed whole in one step (validate_step: pastLen 0, no logits).
  // NomicBert differs in three flags: RoPE on q and k instead of a position
  // table (encoder_rope), a SwiGLU MLP (gated_mlp: down(silu(gate) * up)) and
  // no MLP biases (mlp_bias false; nor attention biases: qkv_bias, o_bias).
  bool encoder = false;
  enum class Activation { GeluErf, GeluTanh };
  Activation activation = Activation::GeluErf;  // transformers' "gelu" (erf) or "gelu_new" / "gelu_pytorch_tanh"
  float layer_norm_eps = 1e-12f;
  int max_positions = 0;  // rows of the position embedding table; with encoder_rope, the longest sequence
  int type_vocab = 0;     // rows of the token-type embedding table
  bool encoder_rope = false;
  bool gated_mlp = false;
  bool mlp_bias = true;

  // Load option: F32 keeps float matrices as stored; Q8_0 or Q4_0 quantizes
  // them at load (see load_weight).
  WeightType quantize_to = WeightType::F32;
};

}  // namespace weft
