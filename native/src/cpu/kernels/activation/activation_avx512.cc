// The vector activations built for AVX-512 F/BW/VL (see activation.h); called
// only in the avx512vnni kernel set, after the run-time CPU check.
#if defined(WEFT_AVX512_ATTENTION)
#include "base/vec16_avx512.h"
// (the Vec16 header first: activation_kernel.h is written against it)
#include "kernels/activation/activation_kernel.h"

namespace weft {
void silu_mul_avx512(float* gate, const float* up, size_t n) { silu_mul_vec(gate, up, n); }
void gelu_erf_avx512(float* x, size_t n) { gelu_erf_vec(x, n); }
}  // namespace weft
#endif
