// Matrix products with the k-quant super-block formats Q4_K and Q6_K (256
// weights per block), the llama.cpp way: the activations are quantized per
// 256-block (one float scale; int16 sums of each 16 and each 32 values), so a
// whole super-block is one exact int32 sum per output, and floats are touched
// once per super-block, not per 32-unit.
//
// The weights are kept in k-groups of 16 interleaved rows (quant_repack.h),
// repacked once at load: one vpdpbusd adds 4 weights x 4 activations to each
// of 16 rows' own int32 lane (8 on 256-bit registers), with no horizontal sums.
//
// The reference order (quant_k.cc, the baseline), for one output (row r, token
// t), per super-block b of the row, with p_j the exact dot product of the
// 32-weight unit j (Q4_K) or 16-weight sub-block j (Q6_K) of weights and
// activations (xd = the activation block's scale):
//   Q4_K: isum = sum_j sc[j] * p_j                (p over the nibbles 0..15)
//         msum = sum_j m[j] * xsum32[j]           (the mins)
//         acc += (d * xd) * float(isum) - (dmin * xd) * float(msum)
//   Q6_K: isum = sum_j sc[j] * p_j                (p over q = u - 32, -32..31)
//         acc += (d * xd) * float(isum)
//   out = acc + bias        (acc starts at 0; d, dmin are the row's f16 values)
// The integers are exact (|isum| < 2^28; float(isum) rounds to nearest even,
// the same in every set), and every kernel set (baseline, AVX2, AVX-VNNI,
// AVX512-VNNI) does these float steps in this order without FMA contraction:
// bit-identical results for any T, thread count or batch.
//
// The kernels of the GGUF row layout (the order before the k-groups: 8 float
// lanes per row) are kept for comparison (kquant_matmul_gguf_rows; the
// benchmark's "old"); weft runs the k-groups.
#pragma once
#include <cstdint>

#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "kernels/matmul_types.h"
#include "kernels/quant/kquant/kquant_formats.h"

namespace weft {

// out[T][N] = in[T][K] @ w^T (+ bias) for w of type Q4_K or Q6_K in k-groups
// (quant_repack.h; K a multiple of 256), with the kernels of `set`. False,
// computing nothing, when this build or CPU has no such set.
bool kquant_matmul(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                   const float* bias, int T, int N, int K);

// project() (matmul.h) for parts all Q4_K or Q6_K (any mix) in k-groups: the
// input quantized per 256-block once (both formats read the same activations)
// into `scratch`, then one pass over every part's groups. Each part's out is
// bit for bit what kquant_matmul of that part alone gives. False, computing
// nothing, when this build or CPU has no such set.
bool kquant_project(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                    const MatmulPart* parts, int count);

// The same on GGUF rows with the row kernels of kquant_formats.h (their own float order):
// what weft ran before the k-groups, for comparisons.
bool kquant_matmul_gguf_rows(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w,
                             WeightType type, const float* bias, int T, int N, int K);

// Whether this build and CPU have the set's Q4_K / Q6_K kernels.
bool kquant_runs(KernelSet set);

}  // namespace weft
