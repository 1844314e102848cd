// The entry of every matrix product of the forward pass: matmul() and
// project() take any WeightType and hand float matrices to the float kernels
// (float/float_matmul.h) and block formats to the quantized ones
// (quant/quant.h). The only header that sits above both.
#pragma once
#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "kernels/matmul_types.h"

namespace weft {

// out[t * N + n] = sum_k in[t * K + k] * w[n * K + k] (+ bias[n]) for t < T, n < N,
// with w's elements of `type`. Every output is summed in one fixed order (see
// float/float_matmul.cc and quant/quant.cc), so a row's result does not depend
// on T, on the other rows, on the thread count or on whether w is 16-bit or its
// float32 copy. The kernels are
// those of cpu_kernel_set() (cpu_features.h).
void matmul(ThreadPool& pool, float* out, const float* in, const void* w, WeightType type, const float* bias, int T, int N,
            int K);

// The same with a given kernel set (tests and bench/float-kernels compare
// sets); F32/F16/BF16 only. Returns false, and computes nothing, when this CPU
// or build cannot run that set (or `type` is a block format).
bool matmul_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const void* w, WeightType type,
                 const float* bias, int T, int N, int K);

// Several matrices that take the same input (q/k/v; gate/up): each part's out
// as matmul() of that part alone computes it, bit for bit, but with one
// quantization of the input and one thread-pool pass over all the parts' rows
// when the parts allow it: all float (F32/F16/BF16, any mix), or all the same
// row-grouped type (Q8_0 or Q4_0), or all k-quants (Q4_K/Q6_K, any mix).
// Otherwise (block types of both families, block and float parts) each part
// runs on its own. count <= kMaxMatmulParts.
void project(ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K, const MatmulPart* parts, int count);

// The same with a given kernel set (tests). False, computing nothing, when
// this CPU or build cannot run that set.
bool project_with(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                  const MatmulPart* parts, int count);

}  // namespace weft
