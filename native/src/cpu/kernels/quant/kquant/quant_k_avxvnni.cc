// Q4_K / Q6_K matmul kernels, AVX-VNNI (VEX): vpdpwssd in the GGUF-row kernel; vpdpbusd and
// vpdpwssd in the k-group kernel on 256-bit registers (8 rows, 4-token tiles).
// Built with its instruction set's flags (CMakeLists.txt); called only when
// cpu_supports() allows (quant_k.cc).
#if defined(WEFT_AVXVNNI_KERNELS)
#define WEFT_KQ_ACC(acc, p, s) _mm256_dpwssd_avx_epi32(acc, p, s)
#define WEFT_KG_VNNI 1
#define WEFT_KG_DPBUSD(acc, w, x) _mm256_dpbusd_avx_epi32(acc, w, x)
#define WEFT_KG_DPWSSD(acc, a, b) _mm256_dpwssd_avx_epi32(acc, a, b)
#include "kernels/quant/kquant/quant_k_group_kernels.h"
#include "kernels/quant/kquant/quant_k_kernels.h"

namespace weft {

void kquant_rows_avxvnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N,
                    int K, size_t n0, size_t n1) {
  k_rows_any(type, out, x, w, bias, T, N, K, n0, n1);
}

void kquant_groups_avxvnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                    int N, int K, size_t g0, size_t g1) {
  k_groups_any(type, out, x, w, bias, T, N, K, g0, g1);
}

}  // namespace weft
#endif
