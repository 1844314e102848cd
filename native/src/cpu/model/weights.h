// The model's weights: one table of slots (weights.cc) that everything else
// iterates: creating the slots for a config, finding the slot of a tensor the
// loader names, the completeness and memory checks, and the list the binding
// reports to JavaScript (CpuModel.weightSlots(), from which the TypeScript
// load plan is made).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/matmul_types.h"
#include "model/config.h"
#include "model/mapped_file.h"
#include "model/weight_arena.h"

namespace weft {

// A size the config determines.
// QGateDim: q_proj's rows (QDim, twice that with attn_output_gate). The Lin*
// dims are a Gated DeltaNet layer's (config.h): ConvDim its q|k|v channels,
// LinValue all value heads, LinHeads the value heads, LinHeadDim one value
// head, ConvTaps the conv weights flattened [ConvDim][conv_kernel], LinQkvz
// and LinBa the rows of Qwen3-Next's fused projections. Experts, ExpertWidth
// and SharedWidth are a mixture-of-experts layer's; One is a single row.
enum class Dim {
  Hidden, QDim, QGateDim, KvDim, HeadDim, Intermediate, Vocab,
  ConvDim, LinValue, LinHeads, LinHeadDim, ConvTaps, LinQkvz, LinBa,
  Experts, ExpertWidth, SharedWidth, One,
  MaxPositions, TypeVocab  // an encoder's position and token-type embedding rows
};

// When a slot is part of the model.
enum class Needed {
  Always, WithQkvBias, WithOBias, WithQkNorm, UntiedHead, SplitLinearProj, FusedLinearProj, WithSharedExpert,
  GatedMlp,           // every decoder; encoders with gated_mlp
  WithMlpBias,        // encoders with mlp_bias
  WithPositionTable,  // encoders without encoder_rope
};

// Which models have a slot: decoders (the Llama family, hybrids), encoders
// (ModelConfig::encoder, the BERT family) or both.
enum class Family { Decoder, Encoder, Both };

// Which layers have a layer slot: all; the attention or the linear-attention
// (Gated DeltaNet) ones; those with a dense MLP or a mixture of experts.
enum class Where { Any, Attention, Linear, DenseMlp, Moe };

// One row of the slot table. `kind` is the name the loader uses (Hugging
// Face's tensor name without prefix and ".weight": "q_proj", "q_proj.bias";
// an expert's slots are named by slot_kind(), "mlp.experts.3.gate_proj").
struct SlotSpec {
  const char* kind;
  bool per_layer;
  Dim rows;
  Dim cols;     // ignored for vectors
  bool vector;  // shape [rows] (norm, bias), as opposed to a matrix that may have one column
  Needed needed;
  Where where = Where::Any;
  // A zero-centred RMSNorm weight: models with norm_plus_one apply it as
  // (1 + w), so the loader adds 1 to it once (the GGUF converter does the same).
  bool centred = false;
  // Kept in float when the model is quantized at load: a router's choice of
  // experts is discrete, and a rounded logit would change it (llama.cpp keeps
  // its routers unquantized too).
  bool keep_float = false;
  Family family = Family::Decoder;
};

// One weight tensor, row-major [rows, cols] (PyTorch's [out, in]).
struct Tensor {
  const SlotSpec* spec = nullptr;
  int expert = -1;  // an expert's slot: which expert of its layer
  WeightType type = WeightType::F32;
  std::vector<float> data;  // vectors (norms, biases), always float32
  // A matrix read into memory: its bytes in the Weights' arena (weight_arena.h),
  // as `type` lays them out: float32 or 16-bit (raw bits) rows, or block
  // formats in row groups (quant_repack.h: Q8_0 / Q4_0 rewritten in place, the
  // same bytes; Q4_K / Q6_K in k-groups).
  uint8_t* stored = nullptr;
  size_t stored_bytes = 0;
  // Q8_0 / Q4_0 with rows % 8 != 0: the last rows % 8 rows (kept as GGUF rows
  // in `stored`) packed again as one zero-padded group, once at load, for the
  // kernels (MatmulPart::group_tail). Empty otherwise (Q4_K / Q6_K pad their
  // last k-group instead).
  std::vector<uint8_t> group_tail;
  // F16 / BF16 matrices in `stored` with cols % 8 == 0, when WEFT_SEXTETS=1:
  // kept in sextets (sextets.h), rewritten in place at load. Mapped matrices
  // stay row-major.
  bool sextets = false;
  // Or, for a matrix used as it lies in the model file (mapped_file.h): its
  // bytes in the file's mapping, which this tensor keeps alive; `stored` is
  // null then.
  std::shared_ptr<const MappedFile> mapping;
  const void* mapped = nullptr;
  uint64_t mapped_bytes = 0;
  int64_t rows = 0, cols = 0;  // expected shape (cols = 1 for vectors)
  bool vector = false;
  bool loaded = false;
  bool required = false;  // the config uses this slot

  const void* raw() const {
    if (mapped != nullptr) return mapped;
    if (stored != nullptr) return stored;
    return data.data();
  }
  // Bytes held (mapped bytes included: they are resident once used).
  double bytes() const {
    return static_cast<double>(data.size()) * sizeof(float) + static_cast<double>(stored_bytes) +
           static_cast<double>(group_tail.size()) + static_cast<double>(mapped_bytes);
  }
  // Drops whatever the tensor holds (copied or mapped); `arena` is the one
  // `stored` came from.
  void clear_storage(WeightArena& arena) {
    data.clear();
    if (stored != nullptr) arena.release(stored, stored_bytes);
    stored = nullptr;
    stored_bytes = 0;
    group_tail.clear();
    sextets = false;
    mapping.reset();
    mapped = nullptr;
    mapped_bytes = 0;
  }
};

// One routed expert of a mixture-of-experts layer: a SwiGLU MLP of its own.
struct ExpertWeights {
  Tensor w_gate, w_up, w_down;
};

struct LayerWeights {
  Tensor attn_norm, wq, wk, wv, wo, bq, bk, bv, bo, q_norm, k_norm;
  // A Gated DeltaNet layer's instead of the attention ones (linear_attention.h);
  // lin_qkvz and lin_ba instead of the four projections with fused_linear_proj.
  Tensor lin_qkv, lin_z, lin_b, lin_a, lin_qkvz, lin_ba, lin_conv, lin_a_log, lin_dt_bias, lin_norm, lin_out;
  Tensor ffn_norm, w_gate, w_up, w_down;
  // An encoder layer's (encoder.cc): the MLP's biases and the two post-norm
  // LayerNorms, after attention and after the MLP (weight and bias each).
  Tensor b_up, b_down, attn_ln, attn_ln_b, out_ln, out_ln_b;
  // A mixture-of-experts layer's instead of the dense MLP (moe.h): the router,
  // the shared expert and its gate, and the routed experts.
  Tensor router, shared_gate, shared_up, shared_down, shared_expert_gate;
  std::vector<ExpertWeights> experts;
};

struct Weights {
  WeightArena arena;  // declared first: outlives the tensors that point into it
  Tensor embed, final_norm, lm_head;
  // An encoder's: absolute position and token-type embeddings, and the
  // LayerNorm over their sum with the token embedding.
  Tensor positions, token_types, embed_ln, embed_ln_b;
  std::vector<LayerWeights> layers;
};

// Creates every slot of the table for a config (shape, required or not), empty.
void init_weight_slots(Weights& w, const ModelConfig& c);

// Calls fn(spec, layer, tensor) for every slot, required or not; layer is -1
// for model-level slots. Model-level slots come first, then layer by layer.
void for_each_slot(Weights& w, const std::function<void(const SlotSpec&, int, Tensor&)>& fn);
void for_each_slot(const Weights& w, const std::function<void(const SlotSpec&, int, const Tensor&)>& fn);

// The name the loader uses for a slot's tensor: spec->kind, or for an expert's
// "mlp.experts.<expert>.<kind>".
std::string slot_kind(const Tensor& t);

// The required slot for a tensor kind (as slot_kind names it) and layer (-1:
// model-level); nullptr when the model has no such slot (e.g. a bias on a
// bias-free model).
Tensor* find_weight_slot(Weights& w, const std::string& kind, int layer);

// Names of required tensors not loaded yet, for an error message ("" = complete).
std::string missing_weights(const Weights& w);

// Bytes held by the loaded weights.
double weight_bytes(const Weights& w);

// Reads the slot's tensor of `dtype` ("F32", "F16", "BF16", or the block
// formats "Q8_0", "Q4_0", "Q4_K", "Q6_K" laid out as GGUF stores them, rows
// along the innermost dimension) at byte `offset` of `path`. Block formats are
// kept in row groups (matrices only; quant_repack.h: Q8_0 / Q4_0 rewritten in
// place, Q4_K / Q6_K packed into k-groups as they are read); float matrices
// are quantized to `quantize_to` when that is a block format and their rows
// are whole blocks, else 16-bit matrices keep their dtype; vectors become
// float32. Conversions run on `pool`. With `mapped_files`, a float matrix kept
// as stored whose bytes start kMapAlignment-aligned in the file is used in
// place from the file's mapping (nothing is read or copied); every other
// tensor is read into its own memory (matrices in `arena`, the one of the
// Weights holding `slot`). Returns "" or an error. In weight_load.cc, as its
// steps: check, map, convert, repack.
std::string load_weight(WeightArena& arena, Tensor& slot, const std::string& path, uint64_t offset, const std::string& dtype,
                        const std::vector<int64_t>& shape, WeightType quantize_to, ThreadPool& pool,
                        MappedFiles* mapped_files);

// Alignment (bytes, within the file) a tensor needs to be used from the mapping:
// GGUF aligns tensor data to 32 bytes by default.
constexpr uint64_t kMapAlignment = 32;

}  // namespace weft
