// Q4_K / Q6_K matmul kernels, AVX2: the GGUF-row kernel with madd + add; the k-group kernel
// with vpmaddubsw + vpmaddwd + vpaddd on 256-bit registers (8 rows, 4-token tiles).
// Built with its instruction set's flags (CMakeLists.txt); called only when
// cpu_supports() allows (quant_k.cc).
#if defined(WEFT_AVX2_KERNELS)
#define WEFT_KQ_ACC(acc, p, s) _mm256_add_epi32(acc, _mm256_madd_epi16(p, s))
#include "kernels/quant/kquant/quant_k_group_kernels.h"
#include "kernels/quant/kquant/quant_k_kernels.h"

namespace weft {

void kquant_rows_avx2(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N,
                    int K, size_t n0, size_t n1) {
  k_rows_any(type, out, x, w, bias, T, N, K, n0, n1);
}

void quantize_input_k_avx2(const float* x, int K, int8_t* q, float* d, int16_t* sum16, int16_t* sum32, int32_t* offset16) {
  const __m256 sign = _mm256_set1_ps(-0.0f), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int b = 0; b < K / kSuperBlock; ++b) {
    const float* v = x + b * kSuperBlock;
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < kSuperBlock; i += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(v + i)));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
    const float s = _mm_cvtss_f32(m4) / 127.0f;
    const __m256 inv = _mm256_set1_ps(s > 0 ? 1.0f / s : 0.0f);
    for (int c = 0; c < kSuperBlock; c += 32) {  // 32 values: 4 x 8 rounded as nearbyint does (to nearest even)
      __m256i r[4];
      for (int k = 0; k < 4; ++k) {
        const __m256 y = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(v + c + 8 * k), inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        r[k] = _mm256_cvtps_epi32(_mm256_max_ps(lo, _mm256_min_ps(hi, y)));
      }
      const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(r[0], r[1]), _mm256_packs_epi32(r[2], r[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * kSuperBlock + c), _mm256_permutevar8x32_epi32(packed, order));
      for (int h = 0; h < 2; ++h) {
        const __m256i t = _mm256_add_epi32(r[2 * h], r[2 * h + 1]);
        __m128i t4 = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
        t4 = _mm_add_epi32(t4, _mm_unpackhi_epi64(t4, t4));
        const int total = _mm_cvtsi128_si32(_mm_add_epi32(t4, _mm_shuffle_epi32(t4, 1)));
        const int g = b * 16 + c / 16 + h;
        sum16[g] = static_cast<int16_t>(total);
        offset16[g] = -32 * total;
      }
      sum32[b * 8 + c / 32] = static_cast<int16_t>(sum16[b * 16 + c / 16] + sum16[b * 16 + c / 16 + 1]);
    }
    d[b] = s;
  }
}

void kquant_groups_avx2(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                    int N, int K, size_t g0, size_t g1) {
  k_groups_any(type, out, x, w, bias, T, N, K, g0, g1);
}

}  // namespace weft
#endif
