// The baseline row conversion to half and the choice by kernel set.
#include "kernels/half/half_rows.h"

#include "base/cpu_features.h"
#include "base/half.h"

namespace weft {

void to_half_baseline(const float* src, uint16_t* dst, int n) {
  for (int i = 0; i < n; ++i) dst[i] = f32_to_f16(src[i]);
}

ToHalfFn to_half_kernel() {
#if defined(WEFT_AVX2_KERNELS)
  // Every set but the baseline implies F16C (cpu_features.cc).
  static const ToHalfFn kernel = cpu_uses_avx2() ? to_half_f16c : to_half_baseline;
  return kernel;
#else
  return to_half_baseline;
#endif
}

}  // namespace weft
