// Q4_K / Q6_K matmul kernel, AVX512-VNNI (+VL): vpdpwssd, EVEX-encoded on 256-bit registers.
// Built with its instruction set's flags (CMakeLists.txt); called only when
// cpu_supports() allows (quant_k.cc).
#if defined(WEFT_AVX512VNNI_KERNELS)
#define WEFT_KQ_ACC(acc, p, s) _mm256_dpwssd_epi32(acc, p, s)
#include "quant_k_kernels.h"

namespace weft {

void kquant_rows_avx512vnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N,
                    int K, size_t n0, size_t n1) {
  k_rows_any(type, out, x, w, bias, T, N, K, n0, n1);
}

}  // namespace weft
#endif
