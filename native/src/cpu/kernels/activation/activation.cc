// The baseline activations and the choice of kernel by kernel set.
#include "kernels/activation/activation.h"

#include "kernels/activation/gelu.h"

#include <cmath>

namespace weft {

void silu_mul_baseline(float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

SiluMulFn silu_mul_kernel_of(KernelSet set) {
  if (!cpu_supports(set)) return nullptr;
  if (set == KernelSet::Baseline) return silu_mul_baseline;
#if defined(WEFT_AVX512_ATTENTION)
  if (set == KernelSet::Avx512Vnni) return silu_mul_avx512;
#endif
#if defined(WEFT_AVX2_KERNELS)
  return silu_mul_avx2;
#else
  return nullptr;
#endif
}

SiluMulFn silu_mul_kernel() {
  static const SiluMulFn kernel = silu_mul_kernel_of(cpu_kernel_set());
  return kernel ? kernel : silu_mul_baseline;
}

GeluFn gelu_erf_kernel_of(KernelSet set) {
  if (!cpu_supports(set)) return nullptr;
  if (set == KernelSet::Baseline) return gelu_erf;
#if defined(WEFT_AVX512_ATTENTION)
  if (set == KernelSet::Avx512Vnni) return gelu_erf_avx512;
#endif
#if defined(WEFT_AVX2_KERNELS)
  return gelu_erf_avx2;
#else
  return nullptr;
#endif
}

GeluFn gelu_erf_kernel() {
  static const GeluFn kernel = gelu_erf_kernel_of(cpu_kernel_set());
  return kernel ? kernel : gelu_erf;
}

}  // namespace weft
