// The vector activations built for AVX2/FMA (see activation.h); called only
// after the run-time CPU check.
#if defined(WEFT_AVX2_KERNELS)
#include "base/vec16_avx2.h"
// (the Vec16 header first: activation_kernel.h is written against it)
#include "kernels/activation/activation_kernel.h"

namespace weft {
void silu_mul_avx2(float* gate, const float* up, size_t n) { silu_mul_vec(gate, up, n); }
void gelu_erf_avx2(float* x, size_t n) { gelu_erf_vec(x, n); }
}  // namespace weft
#endif
