// The index of a row's largest value: greedy decoding's pick, taken from the
// logits while the step's thread still has them (binding.cc), so the engine
// does not scan 151,936 floats in JavaScript.
//
// The rule is that of src/sampling/sampler.ts argmax: a scan that keeps the
// first value greater than every earlier one. So ties go to the lowest index,
// -0 and +0 tie, NaNs are passed over, and a row whose first value is NaN
// gives 0 (nothing compares greater than it). The baseline is that scan; the
// AVX2 kernel keeps 8 lanes of (largest, first index) and takes the lowest
// index among the lanes holding the largest value, which is the same pick.
#pragma once
#include <cstdint>

namespace weft {

using ArgmaxFn = int32_t (*)(const float* row, int32_t n);

// The kernel of this process's kernel set (cpu_features.h).
ArgmaxFn argmax_kernel();

// n >= 1.
int32_t argmax_baseline(const float* row, int32_t n);
int32_t argmax_avx2(const float* row, int32_t n);

}  // namespace weft
