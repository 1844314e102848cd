// gather_before with AVX2 (see selection.h): four candidates' weights compared
// at once, each candidate then stored where the next "before" one goes, kept
// only when it is one (no branch on the coin-toss comparison). Comparisons and
// moves only: nothing can round differently from the scalar loop.
#if defined(WEFT_AVX2_KERNELS)
#include <immintrin.h>

#include "sample/selection.h"

namespace weft {

using Candidate = SamplerScratch::Candidate;

int32_t gather_before_avx2(const Candidate* c, int32_t lo, int32_t end, double pw, int32_t pid, Candidate* out) {
  const __m256d pivot_weight = _mm256_set1_pd(pw);
  int32_t count = 0;
  int32_t q = lo;
  for (; q + 4 <= end; q += 4) {
    // a = [w0, id0, w1, id1], b = [w2, id2, w3, id3] as 64-bit lanes; unpacklo: [w0, w2, w1, w3].
    const __m256d a = _mm256_loadu_pd(reinterpret_cast<const double*>(c + q));
    const __m256d b = _mm256_loadu_pd(reinterpret_cast<const double*>(c + q + 2));
    const __m256d w = _mm256_unpacklo_pd(a, b);
    const int higher = _mm256_movemask_pd(_mm256_cmp_pd(w, pivot_weight, _CMP_GT_OQ));
    int bits = (higher & 1) | ((higher >> 1) & 2) | ((higher << 1) & 4) | (higher & 8);  // candidate j = bit j
    if (_mm256_movemask_pd(_mm256_cmp_pd(w, pivot_weight, _CMP_EQ_OQ)) != 0)  // rare: equal weights, the lower id first
      for (int j = 0; j < 4; ++j) bits |= static_cast<int>(c[q + j].weight == pw && c[q + j].id < pid) << j;
    _mm_storeu_pd(reinterpret_cast<double*>(out + count), _mm256_castpd256_pd128(a));
    count += bits & 1;
    _mm_storeu_pd(reinterpret_cast<double*>(out + count), _mm256_extractf128_pd(a, 1));
    count += (bits >> 1) & 1;
    _mm_storeu_pd(reinterpret_cast<double*>(out + count), _mm256_castpd256_pd128(b));
    count += (bits >> 2) & 1;
    _mm_storeu_pd(reinterpret_cast<double*>(out + count), _mm256_extractf128_pd(b, 1));
    count += bits >> 3;
  }
  for (; q < end; ++q) {
    const Candidate x = c[q];
    out[count] = x;
    count += static_cast<int32_t>((x.weight > pw) | ((x.weight == pw) & (x.id < pid)));
  }
  return count;
}

}  // namespace weft
#endif
