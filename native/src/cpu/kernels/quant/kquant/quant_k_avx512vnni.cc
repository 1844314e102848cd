// Q4_K / Q6_K matmul kernels, AVX512-VNNI (+VL, BW): vpdpwssd on 256-bit registers in the
// GGUF-row kernel; the k-group kernel on 512-bit registers (16 rows, 8-token tiles).
// Built with its instruction set's flags (CMakeLists.txt); called only when
// cpu_supports() allows (quant_k.cc).
#if defined(WEFT_AVX512VNNI_KERNELS)
#define WEFT_KQ_ACC(acc, p, s) _mm256_dpwssd_epi32(acc, p, s)
#define WEFT_KG_512 1
// GCC 12 warns of the undefined first operand inside its own _mm512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/quant/kquant/quant_k_group_kernels.h"
#include "kernels/quant/kquant/quant_k_kernels.h"

namespace weft {

void kquant_rows_avx512vnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N,
                    int K, size_t n0, size_t n1) {
  k_rows_any(type, out, x, w, bias, T, N, K, n0, n1);
}

void kquant_groups_avx512vnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                    int N, int K, size_t g0, size_t g1) {
  k_groups_any(type, out, x, w, bias, T, N, K, g0, g1);
}

}  // namespace weft
#endif
