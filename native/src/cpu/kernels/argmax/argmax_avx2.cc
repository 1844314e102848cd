// argmax with AVX2, 8 lanes (see argmax.h); called only after the run-time CPU check.
#if defined(WEFT_AVX2_KERNELS)
#include <immintrin.h>

#include "kernels/argmax/argmax.h"

namespace weft {

int32_t argmax_avx2(const float* row, int32_t n) {
  if (n < 16) return argmax_baseline(row, n);
  if (row[0] != row[0]) return 0;  // nothing compares greater than a NaN first value
  // Lane l holds the largest value among row[l], row[l + 8], ... seen so far and
  // the first index it was seen at. Every lane starts from row[0], index 0:
  // only a strictly greater value replaces it, as in the scan.
  __m256 best = _mm256_set1_ps(row[0]);
  __m256i best_index = _mm256_setzero_si256();
  __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i step = _mm256_set1_epi32(8);
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(row + i);
    const __m256 greater = _mm256_cmp_ps(v, best, _CMP_GT_OQ);  // false for NaN
    best = _mm256_blendv_ps(best, v, greater);
    best_index = _mm256_blendv_epi8(best_index, index, _mm256_castps_si256(greater));
    index = _mm256_add_epi32(index, step);
  }
  alignas(32) float values[8];
  alignas(32) int32_t indices[8];
  _mm256_store_ps(values, best);
  _mm256_store_si256(reinterpret_cast<__m256i*>(indices), best_index);
  // The largest over the lanes, at the lowest index that holds it (-0 == +0 here, as in the scan).
  float best_value = values[0];
  int32_t best_at = indices[0];
  for (int l = 1; l < 8; ++l)
    if (values[l] > best_value || (values[l] == best_value && indices[l] < best_at)) {
      best_value = values[l];
      best_at = indices[l];
    }
  for (; i < n; ++i)
    if (row[i] > best_value) {
      best_value = row[i];
      best_at = i;
    }
  return best_at;
}

}  // namespace weft
#endif
