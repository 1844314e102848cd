// The baseline argmax and the choice by kernel set (see argmax.h).
#include "kernels/argmax/argmax.h"

#include "base/cpu_features.h"

namespace weft {

int32_t argmax_baseline(const float* row, int32_t n) {
  int32_t best = 0;
  float best_value = row[0];
  for (int32_t i = 1; i < n; ++i)
    if (row[i] > best_value) {
      best_value = row[i];
      best = i;
    }
  return best;
}

ArgmaxFn argmax_kernel() {
#if defined(WEFT_AVX2_KERNELS)
  static const ArgmaxFn kernel = cpu_uses_avx2() ? argmax_avx2 : argmax_baseline;
  return kernel;
#else
  return argmax_baseline;
#endif
}

}  // namespace weft
