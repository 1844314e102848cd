// The row passes with AVX-512 (see exp_rows.h), for the avx512vnni kernel set:
// fdlibm's exp eight doubles at a time, the same operations per lane as
// exp4 in exp_rows_avx2.cc (and so as jsmath::exp), with mask registers in
// place of blends; the lanes of the rare branches (|x| >= 704, NaN, x == 1)
// are redone with the scalar exp. Built with -ffp-contract=off (CMakeLists.txt):
// a fused multiply-add would round differently from V8's Math.exp.
// Only AVX-512 F instructions (the pd logic ops are DQ: integer ones stand in).
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_* (avx512fintrin.h), which
// -Wmaybe-uninitialized reports falsely once inlined here; no lane of those is read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "sample/exp_rows.h"
#include "sample/js_math.h"

namespace weft {
namespace {

inline __m512i high_words(uint32_t high) { return _mm512_set1_epi64(static_cast<int64_t>(static_cast<uint64_t>(high) << 32)); }
inline __m512d or_pd(__m512d a, __m512i b) { return _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(a), b)); }

// exp of 8 lanes; `scalar` gets the lanes the caller must redo with jsmath::exp.
inline __m512d exp8(__m512d x, __mmask8& scalar) {
  const __m512i bits = _mm512_castpd_si512(x);
  const __m512i abs_bits = _mm512_and_si512(bits, _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
  const __m512i sign = _mm512_and_si512(bits, _mm512_set1_epi64(static_cast<int64_t>(0x8000000000000000ull)));
  // fdlibm's branches by the high word of |x| (hx): |x| >= high << 32 iff hx >= high.
  const __mmask8 big = _mm512_cmpge_epi64_mask(abs_bits, high_words(0x40860000));     // |x| >= 704 (and NaN): scalar
  const __mmask8 reduce = _mm512_cmpge_epi64_mask(abs_bits, high_words(0x3FD62E43));  // hx > 0x3FD62E42
  const __mmask8 wide = _mm512_cmpge_epi64_mask(abs_bits, high_words(0x3FF0A2B2));    // hx >= 0x3FF0A2B2
  const __mmask8 tiny = _mm512_cmplt_epi64_mask(abs_bits, high_words(0x3E300000));    // hx < 0x3E300000
  const __m512d one = _mm512_set1_pd(1.0);
  scalar = big | _mm512_cmp_pd_mask(x, one, _CMP_EQ_OQ);

  const __m512d ln2_hi = _mm512_set1_pd(6.93147180369123816490e-01), ln2_lo = _mm512_set1_pd(1.90821492927058770002e-10);
  // |x| in (ln2 / 2, 1.5 ln2): k = +-1, hi = x - (+-ln2HI), lo = +-ln2LO.
  const __m512d hi_a = _mm512_sub_pd(x, or_pd(ln2_hi, sign));
  const __m512d lo_a = or_pd(ln2_lo, sign);
  const __m512i k_a = _mm512_sub_epi64(_mm512_set1_epi64(1), _mm512_and_si512(_mm512_srli_epi64(bits, 62), _mm512_set1_epi64(2)));
  // Larger: k = (int)(invln2 * x + (+-0.5)), hi = x - k * ln2HI, lo = k * ln2LO.
  const __m512d kf = _mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(1.44269504088896338700e+00), x), or_pd(_mm512_set1_pd(0.5), sign));
  const __m256i k32 = _mm512_cvttpd_epi32(kf);
  const __m512d t_b = _mm512_cvtepi32_pd(k32);
  const __m512d hi_b = _mm512_sub_pd(x, _mm512_mul_pd(t_b, ln2_hi));
  const __m512d lo_b = _mm512_mul_pd(t_b, ln2_lo);
  const __m512i k_b = _mm512_cvtepi32_epi64(k32);

  const __m512d hi = _mm512_mask_blend_pd(wide, hi_a, hi_b);
  const __m512d lo = _mm512_mask_blend_pd(wide, lo_a, lo_b);
  const __m512i k = _mm512_mask_blend_epi64(wide, k_a, k_b);
  // The reduced argument (x itself where |x| <= ln2 / 2, k = 0).
  const __m512d r = _mm512_mask_blend_pd(reduce, x, _mm512_sub_pd(hi, lo));

  const __m512d t = _mm512_mul_pd(r, r);
  __m512d poly = _mm512_set1_pd(4.13813679705723846039e-08);
  poly = _mm512_add_pd(_mm512_set1_pd(-1.65339022054652515390e-06), _mm512_mul_pd(t, poly));
  poly = _mm512_add_pd(_mm512_set1_pd(6.61375632143793436117e-05), _mm512_mul_pd(t, poly));
  poly = _mm512_add_pd(_mm512_set1_pd(-2.77777777770155933842e-03), _mm512_mul_pd(t, poly));
  poly = _mm512_add_pd(_mm512_set1_pd(1.66666666666666019037e-01), _mm512_mul_pd(t, poly));
  const __m512d c = _mm512_sub_pd(r, _mm512_mul_pd(t, poly));
  // (r * c) / (2 - c); where k == 0 fdlibm divides by (c - 2): the same value negated, exactly.
  const __m512d d = _mm512_div_pd(_mm512_mul_pd(r, c), _mm512_sub_pd(_mm512_set1_pd(2.0), c));
  const __m512d minus_d = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(d), _mm512_set1_epi64(static_cast<int64_t>(0x8000000000000000ull))));
  const __m512d y0 = _mm512_sub_pd(one, _mm512_sub_pd(minus_d, r));
  const __m512d y = _mm512_sub_pd(one, _mm512_sub_pd(_mm512_sub_pd(lo, d), hi));
  const __m512d twopk = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(k, _mm512_set1_epi64(1023)), 52));
  __m512d result = _mm512_mask_blend_pd(reduce, y0, _mm512_mul_pd(y, twopk));
  return _mm512_mask_blend_pd(tiny, result, _mm512_add_pd(one, x));
}

inline __m512d widen8(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }

// The largest lane as the scalar scan over the lanes finds it.
inline float max_lane(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float max = lanes[0];
  for (int l = 1; l < 16; ++l)
    if (lanes[l] > max) max = lanes[l];
  return max;
}

}  // namespace

float row_max_avx512(const float* row, int32_t n) {
  __m512 m0 = _mm512_set1_ps(-__builtin_inff()), m1 = m0;
  int32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(row + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(row + i + 16));
  }
  float max = max_lane(_mm512_max_ps(m0, m1));
  for (; i < n; ++i)
    if (row[i] > max) max = row[i];
  return max;
}

bool finite_row_max_avx512(const float* row, int32_t n, float* max) {
  // A float is NaN or infinite iff its exponent bits are all set.
  const __m512i exponent = _mm512_set1_epi32(0x7F800000);
  __m512 m0 = _mm512_set1_ps(-__builtin_inff()), m1 = m0;
  __mmask16 bad = 0;
  int32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(row + i), b = _mm512_loadu_ps(row + i + 16);
    m0 = _mm512_max_ps(m0, a);
    m1 = _mm512_max_ps(m1, b);
    bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(a), exponent), exponent);
    bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(b), exponent), exponent);
  }
  bool finite = bad == 0;
  float m = max_lane(_mm512_max_ps(m0, m1));
  for (; i < n; ++i) {
    finite &= __builtin_isfinite(row[i]);
    if (row[i] > m) m = row[i];
  }
  *max = m;
  return finite;
}

int32_t next_at_least_avx512(const float* row, int32_t from, int32_t n, float at_least) {
  const __m512 t = _mm512_set1_ps(at_least);
  int32_t i = from;
  for (; i + 16 <= n; i += 16) {
    const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_loadu_ps(row + i), t, _CMP_GE_OQ);
    if (hit != 0) return i + __builtin_ctz(static_cast<unsigned>(hit));
  }
  while (i < n && row[i] < at_least) ++i;
  return i;
}

void exp_avx512(const double* x, double* out, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __mmask8 scalar;
    _mm512_storeu_pd(out + i, exp8(_mm512_loadu_pd(x + i), scalar));
    for (int l = 0; l < 8; ++l)
      if (scalar & (1u << l)) out[i + l] = jsmath::exp(x[i + l]);
  }
  for (; i < n; ++i) out[i] = jsmath::exp(x[i]);
}

double sum_exp_minus_avx512(const float* row, int32_t n, double max) {
  const __m512d m = _mm512_set1_pd(max);
  double sum = 0;
  alignas(64) double w[8];
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __mmask8 scalar;
    _mm512_store_pd(w, exp8(_mm512_sub_pd(widen8(row + i), m), scalar));
    if (scalar != 0)
      for (int l = 0; l < 8; ++l)
        if (scalar & (1u << l)) w[l] = jsmath::exp(static_cast<double>(row[i + l]) - max);
    // In index order, one add at a time: the JS sum's rounding.
    for (int l = 0; l < 8; ++l) sum += w[l];
  }
  for (; i < n; ++i) sum += jsmath::exp(static_cast<double>(row[i]) - max);
  return sum;
}

int32_t collect_candidates_avx512(const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                                  SamplerScratch::Candidate* out, double* total) {
  const __m512d m = _mm512_set1_pd(max), f = _mm512_set1_pd(floor), temp = _mm512_set1_pd(temperature), mp = _mm512_set1_pd(min_p);
  int32_t count = 0;
  double sum = 0;  // the kept weights in order, one add at a time: the JS total's rounding
  alignas(64) double w[8];
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d logit = widen8(row + i);
    __mmask8 kept = _mm512_cmp_pd_mask(logit, f, _CMP_NLT_UQ);  // not (logit < floor)
    if (kept == 0) continue;
    __mmask8 scalar;
    const __m512d weight = exp8(_mm512_div_pd(_mm512_sub_pd(logit, m), temp), scalar);
    kept &= static_cast<__mmask8>(~_mm512_cmp_pd_mask(weight, mp, _CMP_LT_OQ) | scalar);
    _mm512_store_pd(w, weight);
    for (unsigned bits = kept; bits != 0; bits &= bits - 1) {
      const int l = __builtin_ctz(bits);
      double value = w[l];
      if (scalar & (1u << l)) {
        value = jsmath::exp((static_cast<double>(row[i + l]) - max) / temperature);
        if (value < min_p) continue;
      }
      out[count].weight = value;
      out[count].id = i + l;
      ++count;
      sum += value;
    }
  }
  count = collect_candidates_from(row, i, n, max, temperature, floor, min_p, out, count, &sum);
  *total = sum;
  return count;
}

}  // namespace weft
#endif
