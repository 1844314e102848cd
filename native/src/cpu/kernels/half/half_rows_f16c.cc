// Rows of float32 to half with F16C (see half_rows.h); called only after the
// run-time CPU check.
#if defined(WEFT_AVX2_KERNELS)
#include <immintrin.h>

#include "base/half.h"
#include "kernels/half/half_rows.h"

namespace weft {

void to_half_f16c(const float* src, uint16_t* dst, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) dst[i] = f32_to_f16(src[i]);
}

}  // namespace weft
#endif
