// Quantized matmul kernel, AVX-VNNI: vpdpbusd, VEX-encoded (CPUs with AVX-VNNI but maybe no AVX-512).
// Built with its instruction set's flags (CMakeLists.txt); called only when
// cpu_kernel_set() allows (quant.cc).
#if defined(WEFT_AVXVNNI_KERNELS)
#define WEFT_DOT_U8S8(a, b) _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), a, b)
#include "kernels/quant/quant_kernels.h"
#define WEFT_GROUP_DPBUSD(acc, u, x) _mm256_dpbusd_avx_epi32(acc, u, x)
#define WEFT_GROUP_TOKENS 4
#include "kernels/quant/quant_group_kernels.h"

namespace weft {

void quant_rows_avxvnni(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const float* bias, int T, int N,
                     int K, size_t n0, size_t n1) {
  quant_rows_any(type, out, x, w, bias, T, N, K, n0, n1);
}

void quant_groups_avxvnni(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                       const float* bias, int T, int N, int K, size_t g0, size_t g1) {
  group_rows_any(type, out, x, w, tail, bias, T, N, K, g0, g1);
}

}  // namespace weft
#endif
