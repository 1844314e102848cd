// What every matrix product takes, float or quantized: how a weight matrix is
// stored (WeightType), one matrix of a projection (MatmulPart) and what a
// projection keeps between calls (MatmulScratch). The lowest header of the
// kernels: the float (float/), quantized (quant/) and entry (matmul.h) headers
// all build on it, and it includes none of them.
#pragma once
#include <cstdint>
#include <vector>

namespace weft {

// How a weight matrix is stored: as the checkpoint had it, or quantized at
// load. Matrices in F16 or BF16 stay 16-bit (half the memory, half the bytes
// read per token) and are widened to float32 exactly inside the matmul; the
// block formats Q8_0, Q4_0, Q4_K, Q6_K (quant_formats.h) stay as their bytes
// and go through quant.h; vectors are always float32.
enum class WeightType { F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K };

// One matrix of a projection: out[T][N] = in[T][K] @ w^T (+ bias), with w's
// elements of `type` (as matmul() takes them).
struct MatmulPart {
  float* out = nullptr;
  const void* w = nullptr;
  WeightType type = WeightType::F32;
  const float* bias = nullptr;  // [N], or nullptr
  int N = 0;
  // F16 / BF16 only: w is kept in sextets (sextets.h), not row-major.
  bool sextets = false;
  // Q8_0 / Q4_0 with N % 8 rows after the last whole row group: those rows
  // packed as one more group (pack_group, quant_repack.h), once at load
  // (weights.cc). nullptr otherwise; a part without it has its tail packed per call.
  const uint8_t* group_tail = nullptr;
};

// What a projection keeps between calls: the quantized activations of its
// input (quant_formats.h). Invariant: the vectors only grow (to the largest
// T * K seen), so steps of a size seen before allocate nothing; their contents
// are written by each call before they are read and mean nothing after it.
struct MatmulScratch {
  std::vector<int8_t> q;  // [T][K], per 32-block (quant_formats.h) or per 256-block (quant_k.h)
  std::vector<float> scale;
  std::vector<int32_t> sum, offset_sum;
  // Q4_K / Q6_K's per-256-block extras (KQuantInput, kquant/kquant_formats.h).
  std::vector<int16_t> sum16, sum32;
  std::vector<int32_t> offset16;
};

// At most this many parts in one project() call (matmul.h).
constexpr int kMaxMatmulParts = 4;
// Up to this many tokens a projection's pass hands out guided chunks
// (ThreadPool::parallel_for_guided): its weights are read once either way.
constexpr int kGuidedTokens = 16;

}  // namespace weft
