// The float-weight kernels (F32, F16, BF16, rows or sextets) behind
// project() (matmul.h): baseline (float_matmul.cc), AVX2 (matmul_avx2.cc) and
// AVX-512 (matmul_avx512.cc), all with the body of matmul_kernels.h.
#pragma once
#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "kernels/matmul_types.h"

namespace weft {

// project() for parts that are all float (F32/F16/BF16, any mix): one pass
// over every part's rows with the kernels of `set`. False, computing nothing,
// when this CPU or build cannot run that set.
bool float_project_with(KernelSet set, ThreadPool& pool, const float* in, int T, int K, const MatmulPart* parts, int count);

// The same with the kernels of cpu_kernel_set(), picked once.
void float_project(ThreadPool& pool, const float* in, int T, int K, const MatmulPart* parts, int count);

}  // namespace weft
