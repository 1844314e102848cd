// Matrix products for the forward pass: out[T][N] = in[T][K] @ w[N][K]^T (+ bias).
//
// Weights are PyTorch's [out, in] rows, so each output is a dot product of an
// input row and a weight row. Work is split over weight rows between threads;
// each thread keeps a tile of input rows in cache while its weight rows stream
// past, and computes small register tiles of outputs at a time.
//
// Every kernel exists twice on x86-64: baseline (here) and AVX2/FMA/F16C
// (matmul_avx2.cc, built with those flags), picked once by the CPU. All
// kernels of one process come from the same set, so FMA contraction is the
// same for every weight type.
#include "matmul.h"

#include <algorithm>
#include <vector>

#include "cpu_features.h"
#include "matmul_kernels.h"
#include "quant.h"
#include "quant_formats.h"

namespace weft {
namespace {

// The baseline kernels: built for the compiler's default target (any x86-64,
// any arm64), vectorised by -O3.
void rows_f32(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
              float* wide) {
  rows<F32Weights>(out, in, static_cast<const float*>(w), bias, T, N, K, n0, n1, wide);
}
void rows_bf16(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
               float* wide) {
  rows<BF16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}
// F16 widens natively on ARM, with portable bit steps elsewhere.
void rows_f16(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
              float* wide) {
#if defined(WEFT_HAVE_F16C_WEIGHTS)
  rows<F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
#else
  rows<F16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
#endif
}

}  // namespace

namespace {

RowKernel kernel_for(WeightType type) {
#if defined(WEFT_AVX2_KERNELS)
  if (cpu_uses_avx2()) return type == WeightType::F32 ? rows_f32_avx2 : type == WeightType::F16 ? rows_f16_avx2 : rows_bf16_avx2;
#endif
  return type == WeightType::F32 ? rows_f32 : type == WeightType::F16 ? rows_f16 : rows_bf16;
}

}  // namespace

void matmul(ThreadPool& pool, float* out, const float* in, const void* w, WeightType type, const float* bias, int T, int N,
            int K) {
  if (is_quantized(type)) return quant_matmul(pool, out, in, static_cast<const uint8_t*>(w), type, bias, T, N, K);
  // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
  size_t grain = std::max<size_t>(1, 16384 / std::max(1, K));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  grain = (grain + 23) / 24 * 24;  // whole 3- and 8-row tiles
  // Below ~64K multiply-adds, waking other threads costs more than it saves.
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  const RowKernel kernel = kernel_for(type);
  // Per thread: room to widen one row block (up to 8 rows) of 16-bit weights.
  std::vector<float> wide(type == WeightType::F32 ? 0 : static_cast<size_t>(pool.size()) * 8 * K);
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int thread) {
    kernel(out, in, w, bias, T, N, K, n0, n1, wide.empty() ? nullptr : &wide[static_cast<size_t>(thread) * 8 * K]);
  });
}

}  // namespace weft
