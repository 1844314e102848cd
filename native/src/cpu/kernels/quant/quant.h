// Matrix products with quantized weights (Q8_0, Q4_0, Q4_K, Q6_K; see
// quant_formats.h), and converting rows to and from those formats.
//
// The activations are quantized per 32-block to int8 once per matmul; each
// output is then a sum over 32-weight units of exact int32 dot products times
// float scales, in one fixed order (quant.cc), which every kernel set keeps:
// the baseline, AVX2, AVX-VNNI and AVX512-VNNI kernels give bit-identical
// results, for any T, thread count or batch. Q4_K and Q6_K go to their own
// super-block kernels (quant_k.h: activations per 256-block, the same
// bit-identity across sets); the Q4_K/Q6_K cases of quant_kernels.h and of
// quant.cc's baseline are no longer reached.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "kernels/matmul_types.h"

namespace weft {

// out[T][N] = in[T][K] @ w^T (+ bias), w: N rows of quant_row_bytes(type, K)
// bytes as weft stores them: Q8_0 and Q4_0 in row groups (quant_repack.h:
// repack_rows at load), Q4_K and Q6_K in k-groups (pack_kgroups at load, of
// kgroup_matrix_bytes); K a multiple of the
// format's block (checked at load). Uses the kernels of cpu_kernel_set().
void quant_matmul(ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type, const float* bias, int T,
                  int N, int K);

// The same with a given kernel set (tests compare sets). Returns false, and
// computes nothing, when this CPU or build cannot run that set.
bool quant_matmul_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                       const float* bias, int T, int N, int K);

// project() (matmul.h) for parts that are all of block formats: one
// quantization of the input and one pass when they are all Q8_0 or all Q4_0;
// each part on its own otherwise (k-quants: quant_k.h).
void quant_project(ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K, const MatmulPart* parts, int count);
bool quant_project_with(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                        const MatmulPart* parts, int count);

// The AMX-INT8 kernel (quant_amx.h) on row-grouped Q8_0, for any T (quant_matmul
// uses it from kAmxMinTokens where cpu_uses_amx()). Returns false, and
// computes nothing, unless cpu_amx_status().usable and type is Q8_0.
bool quant_matmul_amx_with(ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                           const float* bias, int T, int N, int K);

// The per-row kernels on GGUF rows of any type (what Q8_0 and Q4_0 ran before
// the row groups; kept for Q4_K and Q6_K, and for comparisons in
// bench/quant-kernels). Its float order differs from the row groups'.
bool quant_matmul_gguf_rows_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w,
                                 WeightType type, const float* bias, int T, int N, int K);

// One GGUF row of K weights as float32.
void dequantize_row(WeightType type, const uint8_t* row, float* out, int64_t K);

// Quantizes one row of K floats (K a multiple of 32) to Q8_0 or Q4_0, as
// llama.cpp's reference quantizers do (scale = max |x| / 127, resp. the
// signed extreme / -8, stored as f16; round to nearest). False for other types.
bool quantize_row(WeightType type, const float* x, uint8_t* out, int64_t K);

}  // namespace weft
