// Matrix products with float weights (F32, F16, BF16): out[T][N] = in[T][K] @ w[N][K]^T (+ bias).
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
#include "kernels/float/float_matmul.h"

#include <algorithm>
#include <vector>

#include "kernels/float/matmul_kernels.h"

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

void rows_bf16_sextets(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                      size_t n1, float* wide) {
  sextet_rows<BF16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}
void rows_f16_sextets(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                     size_t n1, float* wide) {
#if defined(WEFT_HAVE_F16C_WEIGHTS)
  sextet_rows<F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
#else
  sextet_rows<F16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
#endif
}

}  // namespace

namespace {

// The row kernel of a set for a weight type; nullptr when this build or CPU
// cannot run that set. avxvnni runs the AVX2 float kernels, avx512vnni the
// AVX-512 ones (bit-identical to AVX2; the set implies AVX-512 F/BW/VL).
// `sextets`: a 16-bit matrix kept in sextets (sextets.h).
RowKernel kernel_of(KernelSet set, WeightType type, bool sextets) {
  if (!cpu_supports(set)) return nullptr;
  const bool f32 = type == WeightType::F32, f16 = type == WeightType::F16;
#if defined(WEFT_AVX512_FLOAT_KERNELS)
  if (set == KernelSet::Avx512Vnni) {
    if (sextets) return f16 ? rows_f16_sextets_avx512 : rows_bf16_sextets_avx512;
    return f32 ? rows_f32_avx512 : f16 ? rows_f16_avx512 : rows_bf16_avx512;
  }
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (set != KernelSet::Baseline) {
    if (sextets) return f16 ? rows_f16_sextets_avx2 : rows_bf16_sextets_avx2;
    return f32 ? rows_f32_avx2 : f16 ? rows_f16_avx2 : rows_bf16_avx2;
  }
#endif
  if (set != KernelSet::Baseline) return nullptr;
  if (sextets) return f16 ? rows_f16_sextets : rows_bf16_sextets;
  return f32 ? rows_f32 : f16 ? rows_f16 : rows_bf16;
}

// Float passes hand out rows in blocks of 24 (whole 3-, 6- and 8-row tiles).
constexpr size_t kRowBlock = 24;

// One pass over the rows of every part (each with its kernel), in blocks of
// kRowBlock rows; a chunk may span the end of one part and the start of the
// next. A row is computed the same whichever chunk holds it.
void run_parts(const RowKernel* kernels, ThreadPool& pool, const float* in, int T, int K, const MatmulPart* parts, int count) {
  size_t rows = 0, first_block[kMaxMatmulParts + 1] = {0};
  bool widens = false;
  for (int p = 0; p < count; ++p) {
    rows += static_cast<size_t>(parts[p].N);
    first_block[p + 1] = first_block[p] + (static_cast<size_t>(parts[p].N) + kRowBlock - 1) / kRowBlock;
    widens = widens || parts[p].type != WeightType::F32;
  }
  const size_t blocks = first_block[count];
  const size_t wide_floats = widens ? static_cast<size_t>(8) * K : 0;
  auto chunk = [&](size_t b0, size_t b1, int) {
    // Room to widen one row block (up to 8 rows) of 16-bit weights, per thread,
    // kept between calls: no allocation per step once the largest K was seen.
    static thread_local std::vector<float> wide;
    if (wide.size() < wide_floats) wide.resize(wide_floats);
    for (int p = 0; p < count; ++p) {
      const size_t from = std::max(b0, first_block[p]), to = std::min(b1, first_block[p + 1]);
      if (from >= to) continue;
      const MatmulPart& part = parts[p];
      const size_t n0 = (from - first_block[p]) * kRowBlock, n1 = std::min<size_t>(part.N, (to - first_block[p]) * kRowBlock);
      kernels[p](part.out, in, part.w, part.bias, T, part.N, K, n0, n1, part.type != WeightType::F32 ? wide.data() : nullptr);
    }
  };
  // Below ~64K multiply-adds, waking other threads costs more than it saves.
  if (static_cast<size_t>(T) * rows * K < (1u << 16)) return chunk(0, blocks, 0);
  const size_t block_bytes = kRowBlock * static_cast<size_t>(K) * (widens ? 2 : 4);
  if (T <= kGuidedTokens) {
    // Few tokens: each block's rows are read once, so chunks may be large;
    // guided chunks (at most ~512 KB of weights) cut the hand-offs.
    pool.parallel_for_guided(blocks, std::max<size_t>(1, (size_t{512} << 10) / block_bytes), chunk);
  } else {
    // ~192 KB of weights per chunk (they stay in L2 while every token tile
    // passes them, and each tile's inputs are read once per chunk: against
    // ~48 KB chunks, 512-token F16 prefills 1.09x and 64-stream steps 1.06x
    // faster on an Ice Lake Xeon), and enough chunks to keep every thread busy.
    size_t grain = std::max<size_t>(1, (size_t{192} << 10) / (block_bytes / kRowBlock));
    grain = std::min(grain, std::max<size_t>(1, rows / (4 * static_cast<size_t>(pool.size()))));
    pool.parallel_for(blocks, (grain + kRowBlock - 1) / kRowBlock, chunk);
  }
}

}  // namespace


bool float_project_with(KernelSet set, ThreadPool& pool, const float* in, int T, int K, const MatmulPart* parts, int count) {
  RowKernel kernels[kMaxMatmulParts];
  for (int p = 0; p < count; ++p)
    if (!(kernels[p] = kernel_of(set, parts[p].type, parts[p].sextets))) return false;
  run_parts(kernels, pool, in, T, K, parts, count);
  return true;
}

void float_project(ThreadPool& pool, const float* in, int T, int K, const MatmulPart* parts, int count) {
  const KernelSet set = cpu_kernel_set();
  // [F32, F16, BF16, F16 in sextets, BF16 in sextets]
  static const RowKernel kernels[5] = {kernel_of(set, WeightType::F32, false), kernel_of(set, WeightType::F16, false),
                                       kernel_of(set, WeightType::BF16, false), kernel_of(set, WeightType::F16, true),
                                       kernel_of(set, WeightType::BF16, true)};
  RowKernel chosen[kMaxMatmulParts];
  for (int p = 0; p < count; ++p) {
    const WeightType t = parts[p].type;
    chosen[p] = kernels[t == WeightType::F32 ? 0 : (t == WeightType::F16 ? 1 : 2) + (parts[p].sextets ? 2 : 0)];
  }
  run_parts(chosen, pool, in, T, K, parts, count);
}

}  // namespace weft
