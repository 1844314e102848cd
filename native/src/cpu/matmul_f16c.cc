// The F16-weight matmul kernel built for AVX2/FMA/F16C (CMake adds those flags
// to this file on x86-64 and defines WEFT_F16C_KERNEL). matmul.cc calls it only
// after checking the CPU at run time.
#if defined(WEFT_F16C_KERNEL)
#include "matmul_kernels.h"

namespace weft {

void rows_f16_f16c(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
                   float* wide) {
  rows<F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1, wide);
}

}  // namespace weft
#endif
