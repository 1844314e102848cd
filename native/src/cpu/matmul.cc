// Matrix products for the forward pass: out[T][N] = in[T][K] @ w[N][K]^T (+ bias).
//
// Weights are PyTorch's [out, in] rows, so each output is a dot product of an
// input row and a weight row. Work is split over weight rows between threads;
// each thread keeps a tile of input rows in cache while its weight rows stream
// past, and computes small register tiles of outputs at a time.
//
// Every kernel exists three times on x86-64: baseline (here), AVX2/FMA/F16C
// (matmul_avx2.cc) and AVX-512 (matmul_avx512.cc), each built with its flags,
// picked once by the CPU. All kernels of one process come from the same set,
// so FMA contraction is the same for every weight type. The AVX2 and AVX-512
// kernels both contract every multiply-add into an FMA and give bit-identical
// results; the baseline (no FMA on plain x86-64) rounds each product, so its
// results differ from theirs in the last bits.
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

// The row kernel of a set for a weight type; nullptr when this build or CPU
// cannot run that set. avxvnni runs the AVX2 float kernels, avx512vnni the
// AVX-512 ones (bit-identical to AVX2; the set implies AVX-512 F/BW/VL).
RowKernel kernel_of(KernelSet set, WeightType type) {
  if (!cpu_supports(set)) return nullptr;
  const bool f32 = type == WeightType::F32, f16 = type == WeightType::F16;
#if defined(WEFT_AVX512_FLOAT_KERNELS)
  if (set == KernelSet::Avx512Vnni) return f32 ? rows_f32_avx512 : f16 ? rows_f16_avx512 : rows_bf16_avx512;
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (set != KernelSet::Baseline) return f32 ? rows_f32_avx2 : f16 ? rows_f16_avx2 : rows_bf16_avx2;
#endif
  if (set != KernelSet::Baseline) return nullptr;
  return f32 ? rows_f32 : f16 ? rows_f16 : rows_bf16;
}

// Rows per chunk of a float pass over `rows` rows of K columns: ~64 KB of
// weights, enough chunks to keep every thread busy, whole 3-, 6- and 8-row tiles.
size_t float_grain(size_t rows, int K, int threads) {
  size_t grain = std::max<size_t>(1, 16384 / std::max(1, K));
  grain = std::min(grain, std::max<size_t>(1, rows / (4 * static_cast<size_t>(threads))));
  return (grain + 23) / 24 * 24;
}

// One pass over the rows of every part (each with its kernel): chunks never
// straddle two parts, and a row is computed the same whichever chunk holds it.
void run_parts(const RowKernel* kernels, ThreadPool& pool, const float* in, int T, int K, const MatmulPart* parts, int count) {
  size_t rows = 0;
  bool widens = false;
  for (int p = 0; p < count; ++p) {
    rows += static_cast<size_t>(parts[p].N);
    widens = widens || parts[p].type != WeightType::F32;
  }
  // Below ~64K multiply-adds, waking other threads costs more than it saves: one chunk per part, inline.
  const bool inline_only = static_cast<size_t>(T) * rows * K < (1u << 16);
  const size_t grain = inline_only ? rows : float_grain(rows, K, pool.size());
  size_t first_chunk[kMaxMatmulParts + 1] = {0};
  for (int p = 0; p < count; ++p) first_chunk[p + 1] = first_chunk[p] + (static_cast<size_t>(parts[p].N) + grain - 1) / grain;
  const size_t wide_floats = widens ? static_cast<size_t>(8) * K : 0;
  auto chunks = [&](size_t c0, size_t c1, int) {
    // Room to widen one row block (up to 8 rows) of 16-bit weights, per thread,
    // kept between calls: no allocation per step once the largest K was seen.
    static thread_local std::vector<float> wide;
    if (wide.size() < wide_floats) wide.resize(wide_floats);
    for (size_t c = c0; c < c1; ++c) {
      int p = 0;
      while (c >= first_chunk[p + 1]) ++p;
      const MatmulPart& part = parts[p];
      const size_t n0 = (c - first_chunk[p]) * grain, n1 = std::min<size_t>(part.N, n0 + grain);
      kernels[p](part.out, in, part.w, part.bias, T, part.N, K, n0, n1,
                 part.type != WeightType::F32 ? wide.data() : nullptr);
    }
  };
  if (inline_only) chunks(0, first_chunk[count], 0);
  else pool.parallel_for(first_chunk[count], 1, chunks);
}

}  // namespace

bool project_with(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                  const MatmulPart* parts, int count) {
  int quantized = 0;
  for (int p = 0; p < count; ++p) quantized += is_quantized(parts[p].type) ? 1 : 0;
  if (quantized == count) return quant_project_with(set, pool, scratch, in, T, K, parts, count);
  if (quantized > 0) {  // float and block matrices together: each on its own
    for (int p = 0; p < count; ++p)
      if (!project_with(set, pool, scratch, in, T, K, &parts[p], 1)) return false;
    return true;
  }
  RowKernel kernels[kMaxMatmulParts];
  for (int p = 0; p < count; ++p)
    if (!(kernels[p] = kernel_of(set, parts[p].type))) return false;
  run_parts(kernels, pool, in, T, K, parts, count);
  return true;
}

void project(ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K, const MatmulPart* parts, int count) {
  int quantized = 0;
  for (int p = 0; p < count; ++p) quantized += is_quantized(parts[p].type) ? 1 : 0;
  if (quantized == count) return quant_project(pool, scratch, in, T, K, parts, count);
  if (quantized > 0) {
    for (int p = 0; p < count; ++p) project(pool, scratch, in, T, K, &parts[p], 1);
    return;
  }
  static const RowKernel kernels[3] = {kernel_of(cpu_kernel_set(), WeightType::F32), kernel_of(cpu_kernel_set(), WeightType::F16),
                                       kernel_of(cpu_kernel_set(), WeightType::BF16)};
  RowKernel chosen[kMaxMatmulParts];
  for (int p = 0; p < count; ++p) {
    const WeightType t = parts[p].type;
    chosen[p] = kernels[t == WeightType::F32 ? 0 : t == WeightType::F16 ? 1 : 2];
  }
  run_parts(chosen, pool, in, T, K, parts, count);
}

void matmul(ThreadPool& pool, float* out, const float* in, const void* w, WeightType type, const float* bias, int T, int N,
            int K) {
  MatmulScratch scratch;
  MatmulPart part;
  part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
  project(pool, scratch, in, T, K, &part, 1);
}

bool matmul_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const void* w, WeightType type,
                 const float* bias, int T, int N, int K) {
  if (is_quantized(type)) return false;
  MatmulScratch scratch;
  MatmulPart part;
  part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
  return project_with(set, pool, scratch, in, T, K, &part, 1);
}

}  // namespace weft
