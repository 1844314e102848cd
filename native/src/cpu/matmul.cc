// Matrix products for the forward pass: out[T][N] = in[T][K] @ w[N][K]^T (+ bias).
//
// Weights are PyTorch's [out, in] rows, so each output is a dot product of an
// input row and a weight row. Work is split over weight rows between threads;
// each thread keeps a tile of input rows in cache while its weight rows stream
// past, and computes small register tiles of outputs at a time.
#include "matmul.h"

#include <cstdlib>
#if defined(WEFT_F16C_KERNEL)
#include <cpuid.h>
#endif
#include <string>
#include <vector>

#include "matmul_kernels.h"

// Kernels get an AVX2/FMA clone on x86-64 Linux, picked at load time by the CPU
// (the default clone runs on any x86-64). Elsewhere plain -O3 vectorises them.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define WEFT_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define WEFT_KERNEL
#endif

namespace weft {
namespace {

// One entry point per weight type, each cloned for the CPU (see WEFT_KERNEL).
WEFT_KERNEL void rows_f32(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                           size_t n1, float* wide) {
  rows<F32Weights>(out, in, static_cast<const float*>(w), bias, T, N, K, n0, n1, wide);
}
// F16 picks its widening by CPU: F16C on x86-64 (checked at run time), the
// native conversion on ARM, the portable bit steps elsewhere.
WEFT_KERNEL void rows_f16_portable(float* out, const float* in, const void* w, const float* bias, int T, int N, int K,
                                   size_t n0, size_t n1, float* wide) {
  rows<F16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}
#if defined(WEFT_HAVE_F16C_WEIGHTS)
void rows_f16_native(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                     size_t n1, float* wide) {
  rows<F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}
#endif

RowKernel f16_kernel() {
#if defined(WEFT_F16C_KERNEL)
  // WEFT_NO_F16C=1 forces the portable kernel (tests use it to cover that path).
  static const bool f16c = [] {
    __builtin_cpu_init();
    unsigned eax, ebx, ecx = 0, edx;
    const bool has_f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29));  // CPUID.1:ECX.F16C
    const char* off = std::getenv("WEFT_NO_F16C");
    return (!off || std::string(off) != "1") && has_f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  if (f16c) return rows_f16_f16c;
#endif
#if defined(WEFT_HAVE_F16C_WEIGHTS)
  return rows_f16_native;
#endif
  return rows_f16_portable;
}
WEFT_KERNEL void rows_bf16(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                           size_t n1, float* wide) {
  rows<BF16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}

}  // namespace

void matmul(ThreadPool& pool, float* out, const float* in, const void* w, WeightType type, const float* bias, int T, int N,
            int K) {
  // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
  size_t grain = std::max<size_t>(1, 16384 / std::max(1, K));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  grain = (grain + 23) / 24 * 24;  // whole 3- and 8-row tiles
  // Below ~64K multiply-adds, waking other threads costs more than it saves.
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  const RowKernel kernel = type == WeightType::F32 ? rows_f32 : type == WeightType::F16 ? f16_kernel() : rows_bf16;
  // Per thread: room to widen one row block (up to 8 rows) of 16-bit weights.
  std::vector<float> wide(type == WeightType::F32 ? 0 : static_cast<size_t>(pool.size()) * 8 * K);
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int thread) {
    kernel(out, in, w, bias, T, N, K, n0, n1, wide.empty() ? nullptr : &wide[static_cast<size_t>(thread) * 8 * K]);
  });
}

}  // namespace weft
