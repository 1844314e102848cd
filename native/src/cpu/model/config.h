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
  std::vector<double> inv_freq;  // [head_dim / 2] RoPE frequencies, scaling already applied
  // Load option: F32 keeps float matrices as stored; Q8_0 or Q4_0 quantizes
  // them at load (see load_weight).
  WeightType quantize_to = WeightType::F32;
};

}  // namespace weft
