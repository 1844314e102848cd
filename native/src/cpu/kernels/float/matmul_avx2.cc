// The matmul kernels built for AVX2/FMA/F16C (CMake adds those flags to this
// file on x86-64 and defines WEFT_AVX2_KERNELS). float_matmul.cc calls them only
// when cpu_kernel_set() (cpu_features.h) allows.
#if defined(WEFT_AVX2_KERNELS)
#include "kernels/float/matmul_kernels.h"

namespace weft {

void rows_f32_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
                   float* wide) {
  rows<F32Weights>(out, in, static_cast<const float*>(w), bias, T, N, K, n0, n1, wide);
}
void rows_f16_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
                   float* wide) {
  rows<F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}
void rows_bf16_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                    size_t n1, float* wide) {
  rows<BF16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}

void rows_f16_sextets_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                          size_t n1, float* wide) {
  sextet_rows<F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}
void rows_bf16_sextets_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                           size_t n1, float* wide) {
  sextet_rows<BF16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}

}  // namespace weft
#endif
