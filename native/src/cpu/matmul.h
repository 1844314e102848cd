#pragma once
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

}  // namespace weft
