// Quantized matmul kernel, AVX2: maddubs (u8 x s8 -> pairs of int16) then madd (pairs -> int32).
// Built with its instruction set's flags (CMakeLists.txt); called only when
// cpu_kernel_set() allows (quant.cc).
#if defined(WEFT_AVX2_KERNELS)
#define WEFT_DOT_U8S8(a, b) _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1))
#include "kernels/quant/quant_kernels.h"
#define WEFT_GROUP_TOKENS 4
#include "kernels/quant/quant_group_kernels.h"

namespace weft {

// quantize_input (quant.cc) 8 floats at a time, with the same operations in
// the same order on each element: max (NaN skipped, as std::max(amax, |v|)
// does), one division, rounding to nearest even, the clamps as std::min /
// std::max order their operands. Every set above the baseline uses it.
void quantize_input_avx2(const float* x, int K, int8_t* q, float* scale, int32_t* sum) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int u = 0; u < K / kQuantUnit; ++u) {
    const float* v = x + u * kQuantUnit;
    __m256 part[4], m = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      part[i] = _mm256_loadu_ps(v + 8 * i);
      m = _mm256_max_ps(_mm256_and_ps(part[i], abs_mask), m);  // m when |v| is NaN
    }
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    const float amax = _mm_cvtss_f32(h);
    const float s = amax / 127.0f;
    const float inv = s > 0 ? 1.0f / s : 0.0f;
    __m256i ints[4];
    for (int i = 0; i < 4; ++i) {
      const __m256 r = _mm256_round_ps(_mm256_mul_ps(part[i], _mm256_set1_ps(inv)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m256 c = _mm256_max_ps(_mm256_min_ps(r, _mm256_set1_ps(127.0f)), _mm256_set1_ps(-127.0f));
      ints[i] = _mm256_cvttps_epi32(c);
    }
    // int32 -> int8 (in range already); packs interleave 128-bit lanes, the permute restores the order.
    const __m256i w16 = _mm256_packs_epi16(_mm256_packs_epi32(ints[0], ints[1]), _mm256_packs_epi32(ints[2], ints[3]));
    const __m256i bytes = _mm256_permutevar8x32_epi32(w16, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + u * kQuantUnit), bytes);
    const __m256i total8 = _mm256_add_epi32(_mm256_add_epi32(ints[0], ints[1]), _mm256_add_epi32(ints[2], ints[3]));
    __m128i t4 = _mm_add_epi32(_mm256_castsi256_si128(total8), _mm256_extracti128_si256(total8, 1));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0x4e));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0xb1));
    scale[u] = s;
    sum[u] = _mm_cvtsi128_si32(t4);
  }
}

void quant_rows_avx2(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const float* bias, int T, int N,
                     int K, size_t n0, size_t n1) {
  quant_rows_any(type, out, x, w, bias, T, N, K, n0, n1);
}

void quant_groups_avx2(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                       const float* bias, int T, int N, int K, size_t g0, size_t g1) {
  group_rows_any(type, out, x, w, tail, bias, T, N, K, g0, g1);
}

}  // namespace weft
#endif
