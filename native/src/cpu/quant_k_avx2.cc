// Q4_K / Q6_K matmul kernel, AVX2: madd (pairs of int16 products -> int32) + add.
// Built with its instruction set's flags (CMakeLists.txt); called only when
// cpu_supports() allows (quant_k.cc).
#if defined(WEFT_AVX2_KERNELS)
#define WEFT_KQ_ACC(acc, p, s) _mm256_add_epi32(acc, _mm256_madd_epi16(p, s))
#include "quant_k_kernels.h"

namespace weft {

void kquant_rows_avx2(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N,
                    int K, size_t n0, size_t n1) {
  k_rows_any(type, out, x, w, bias, T, N, K, n0, n1);
}

}  // namespace weft
#endif
