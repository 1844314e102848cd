// gather_before with AVX-512 (see selection.h): eight candidates a step, their
// weights and ids compared at once, the "before" ones compressed out in order.
// Only comparisons, moves and compresses: no arithmetic, so nothing can round
// differently from the scalar loop.
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_* (avx512fintrin.h), which
// -Wmaybe-uninitialized reports falsely once inlined here; no lane of those is read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "sample/selection.h"

namespace weft {
namespace {

using Candidate = SamplerScratch::Candidate;
static_assert(sizeof(Candidate) == 16, "a candidate is two 64-bit lanes: weight, then id (and padding)");

// The 64-bit lanes of four candidates, from one bit a candidate: each bit doubled.
constexpr __mmask8 kLanesOf[16] = {0x00, 0x03, 0x0C, 0x0F, 0x30, 0x33, 0x3C, 0x3F, 0xC0, 0xC3, 0xCC, 0xCF, 0xF0, 0xF3, 0xFC, 0xFF};

// Four candidates' "before" ones to out (a full 64-byte store: out has 8 entries of room past the end); returns how many.
inline int32_t put(__m512i four, unsigned bits, Candidate* out) {
  _mm512_storeu_si512(out, _mm512_maskz_compress_epi64(kLanesOf[bits], four));
  return __builtin_popcount(bits);
}

}  // namespace

int32_t gather_before_avx512(const Candidate* c, int32_t lo, int32_t end, double pw, int32_t pid, Candidate* out) {
  const __m512d pivot_weight = _mm512_set1_pd(pw);
  const __m512i pivot_id = _mm512_set1_epi32(pid);
  // Lanes 0, 2, .., 14 of (a, b) as 64-bit: the eight weights; dwords 2, 6, .., 30: the eight ids.
  const __m512i weight_lanes = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i id_lanes = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30);
  int32_t count = 0;
  int32_t q = lo;
  for (; q + 8 <= end; q += 8) {
    const __m512i a = _mm512_loadu_si512(c + q), b = _mm512_loadu_si512(c + q + 4);
    const __m512d w = _mm512_permutex2var_pd(_mm512_castsi512_pd(a), weight_lanes, _mm512_castsi512_pd(b));
    const __mmask8 higher = _mm512_cmp_pd_mask(w, pivot_weight, _CMP_GT_OQ);
    const __mmask8 tied = _mm512_cmp_pd_mask(w, pivot_weight, _CMP_EQ_OQ);
    unsigned bits = higher;
    if (tied != 0) {  // rare: equal weights, the lower id first
      const __m512i ids = _mm512_permutex2var_epi32(a, id_lanes, b);
      bits |= tied & static_cast<unsigned>(_mm512_cmplt_epi32_mask(ids, pivot_id));
    }
    count += put(a, bits & 15u, out + count);
    count += put(b, bits >> 4, out + count);
  }
  for (; q < end; ++q) {
    const Candidate& x = c[q];
    out[count] = x;
    count += static_cast<int32_t>((x.weight > pw) | ((x.weight == pw) & (x.id < pid)));
  }
  return count;
}

}  // namespace weft
#endif
