#pragma once
#include <cstdint>
#include <vector>

#include "cpu_features.h"
#include "thread_pool.h"

namespace weft {

// How a weight matrix is stored: as the checkpoint had it, or quantized at
// load. Matrices in F16 or BF16 stay 16-bit (half the memory, half the bytes
// read per token) and are widened to float32 exactly inside the matmul; the
// block formats Q8_0, Q4_0, Q4_K, Q6_K (quant_formats.h) stay as their bytes
// and go through quant.h; vectors are always float32.
enum class WeightType { F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K };

// out[t * N + n] = sum_k in[t * K + k] * w[n * K + k] (+ bias[n]) for t < T, n < N,
// with w's elements of `type`. Every output is summed in one fixed order (see
// matmul.cc), so a row's result does not depend on T, on the other rows, on the
// thread count or on whether w is 16-bit or its float32 copy. The kernels are
// those of cpu_kernel_set() (cpu_features.h).
void matmul(ThreadPool& pool, float* out, const float* in, const void* w, WeightType type, const float* bias, int T, int N,
            int K);

// The same with a given kernel set (tests and bench/float-kernels compare
// sets); F32/F16/BF16 only. Returns false, and computes nothing, when this CPU
// or build cannot run that set (or `type` is a block format).
bool matmul_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const void* w, WeightType type,
                 const float* bias, int T, int N, int K);

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
  // Q4_K / Q6_K's per-256-block extras (KQuantInput, quant_k.h).
  std::vector<int16_t> sum16, sum32;
  std::vector<int32_t> offset16;
};

// Several matrices that take the same input (q/k/v; gate/up): each part's out
// as matmul() of that part alone computes it, bit for bit, but with one
// quantization of the input and one thread-pool pass over all the parts' rows
// when the parts allow it: all float (F32/F16/BF16, any mix), or all the same
// row-grouped type (Q8_0 or Q4_0), or all k-quants (Q4_K/Q6_K, any mix).
// Otherwise (block types of both families, block and float parts) each part
// runs on its own. count <= kMaxMatmulParts.
constexpr int kMaxMatmulParts = 4;
// Up to this many tokens a projection's pass hands out guided chunks
// (ThreadPool::parallel_for_guided): its weights are read once either way.
constexpr int kGuidedTokens = 16;
void project(ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K, const MatmulPart* parts, int count);

// The same with a given kernel set (tests). False, computing nothing, when
// this CPU or build cannot run that set.
bool project_with(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                  const MatmulPart* parts, int count);

}  // namespace weft
