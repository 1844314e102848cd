// The CPU model: configuration, weights (float32), the paged KV cache and one
// step's input. forward.cc runs a step; weights.cc fills the weights from
// safetensors files; binding.cc exposes it all to JavaScript.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "matmul.h"
#include "thread_pool.h"

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
};

// One weight tensor, row-major [rows, cols] (PyTorch's [out, in]).
struct Tensor {
  WeightType type = WeightType::F32;
  std::vector<float> data;     // when type == F32
  std::vector<uint16_t> half;  // when type == F16 or BF16 (raw bits)
  int64_t rows = 0, cols = 0;  // expected shape (cols = 1 for vectors)
  bool vector = false;         // shape [rows] (norm, bias), as opposed to a matrix that may have cols == 1
  bool loaded = false;
  bool required = false;

  const void* raw() const { return type == WeightType::F32 ? static_cast<const void*>(data.data()) : half.data(); }
};

struct LayerWeights {
  Tensor attn_norm, wq, wk, wv, wo, bq, bk, bv, bo, q_norm, k_norm;
  Tensor ffn_norm, w_gate, w_up, w_down;
};

struct Weights {
  Tensor embed, final_norm, lm_head;
  std::vector<LayerWeights> layers;
};

enum class KvPrecision { F32, F16, U8 };

// Paged KV cache. Layout [layer][k=0|v=1][block][kv_head][slot][head_dim]: one
// head's keys of one block are contiguous, which is what attention scans.
struct KvCache {
  int num_blocks = 0;
  int block_size = 0;
  KvPrecision precision = KvPrecision::F32;
  size_t elements = 0;          // total elements in the buffer below
  std::vector<float> f32;        // used when precision == F32
  std::vector<uint16_t> f16;     // used when precision == F16 (IEEE half bits)
  // U8: each cached row (one token, one kv head: head_dim values) is stored as
  // bytes q with x ~= min + q * scale; u8_params holds (scale, min) per row.
  std::vector<uint8_t> u8;
  std::vector<float> u8_params;  // [elements / head_dim * 2]
};

// One step, copied out of the JS typed arrays (see src/backends/backend.ts).
struct StepInput {
  std::vector<int32_t> input_ids, positions;            // [T]
  std::vector<int32_t> past_lens;                       // [B]
  std::vector<int32_t> subsequence_begins;              // [B + 1]
  std::vector<int32_t> block_indices;                   // flattened block tables
  std::vector<int32_t> block_indices_begins;            // [B + 1]
  int64_t max_context_len = 0;
  std::vector<int32_t> logits_indices;                  // [R], strictly ascending token indices
  std::vector<int32_t> block_copies;                    // (src, dst) pairs
};

struct Model {
  ModelConfig config;
  Weights weights;
  KvCache cache;
  std::unique_ptr<ThreadPool> pool;
};

// Creates the tensor slots (shapes and which ones are required) for a config.
void init_weight_slots(Model& model);

// Finds the slot for a Hugging Face tensor kind ("q_proj", "embed_tokens", ...)
// and layer (-1 for model-level tensors). nullptr when the model has no such slot.
Tensor* find_weight_slot(Model& model, const std::string& kind, int layer);

// Names of required tensors not loaded yet, for an error message ("" = complete).
std::string missing_weights(const Model& model);

// Reads the slot's tensor of `dtype` ("F32", "F16", "BF16") at byte `offset`
// of `path`: matrices keep a 16-bit dtype, vectors become float32.
// Returns "" or an error message.
std::string load_weight(Tensor& slot, const std::string& path, uint64_t offset, const std::string& dtype,
                        const std::vector<int64_t>& shape);

// Allocates the cache. Returns "" or an error message (nothing changed then).
std::string allocate_cache(Model& model, int num_blocks, int block_size, KvPrecision precision);

// Checks every length, offset and index of a step against the model and cache.
// Returns "" when forward() may run it, else a message naming the first problem.
std::string validate_step(const Model& model, const StepInput& step);

// Runs a validated step; writes [logits_indices.size() * vocab] floats.
void forward(Model& model, const StepInput& step, float* logits);

}  // namespace weft
