// The row passes with AVX2 (see exp_rows.h); fdlibm's exp four doubles at a time: each lane
// runs the operations of jsmath::exp for its branch (|x| < 2^-28, |x| <= ln2 / 2,
// |x| < 1.5 ln2, larger), so it gives the scalar's bits; the lanes of the rare
// branches (|x| >= 704, NaN, x == 1) are redone with the scalar exp. Built with
// -ffp-contract=off and no FMA (CMakeLists.txt): a fused multiply-add would
// round differently from V8's Math.exp.
#if defined(WEFT_AVX2_KERNELS)
#include <immintrin.h>

#include "sample/exp_rows.h"
#include "sample/js_math.h"

namespace weft {
namespace {

inline __m256i hi_threshold(uint32_t high) { return _mm256_set1_epi64x(static_cast<int64_t>(static_cast<uint64_t>(high) << 32)); }
// Lanes whose |x| has a high word >= high.
inline __m256i high_at_least(__m256i abs_bits, uint32_t high) {
  return _mm256_cmpgt_epi64(abs_bits, _mm256_set1_epi64x(static_cast<int64_t>((static_cast<uint64_t>(high) << 32) - 1)));
}

// exp of 4 lanes; `scalar` gets the mask (4 bits) of lanes the caller must redo with jsmath::exp.
inline __m256d exp4(__m256d x, int& scalar) {
  const __m256i bits = _mm256_castpd_si256(x);
  const __m256i abs_bits = _mm256_and_si256(bits, _mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFll));
  const __m256d sign = _mm256_castsi256_pd(_mm256_and_si256(bits, _mm256_set1_epi64x(static_cast<int64_t>(0x8000000000000000ull))));
  // Branches by the high word of |x| (hx), as fdlibm: compare 64-bit |x| against hx << 32.
  const __m256i big = high_at_least(abs_bits, 0x40860000);   // |x| >= 704: scalar
  const __m256i reduce = high_at_least(abs_bits, 0x3FD62E43); // hx > 0x3FD62E42
  const __m256i wide = high_at_least(abs_bits, 0x3FF0A2B2);   // hx >= 0x3FF0A2B2
  const __m256i tiny = _mm256_cmpgt_epi64(hi_threshold(0x3E300000), abs_bits);                           // hx < 0x3E300000
  const __m256d one_eq = _mm256_cmp_pd(x, _mm256_set1_pd(1.0), _CMP_EQ_OQ);
  scalar = _mm256_movemask_pd(_mm256_or_pd(_mm256_castsi256_pd(big), one_eq));

  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d ln2_hi = _mm256_set1_pd(6.93147180369123816490e-01), ln2_lo = _mm256_set1_pd(1.90821492927058770002e-10);
  // |x| in (ln2 / 2, 1.5 ln2): k = +-1, hi = x - (+-ln2HI), lo = +-ln2LO.
  const __m256d hi_a = _mm256_sub_pd(x, _mm256_or_pd(ln2_hi, sign));
  const __m256d lo_a = _mm256_or_pd(ln2_lo, sign);
  const __m256i k_a = _mm256_sub_epi64(_mm256_set1_epi64x(1), _mm256_and_si256(_mm256_srli_epi64(bits, 62), _mm256_set1_epi64x(2)));
  // Larger: k = (int)(invln2 * x + (+-0.5)), hi = x - k * ln2HI, lo = k * ln2LO.
  const __m256d kf = _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(1.44269504088896338700e+00), x), _mm256_or_pd(_mm256_set1_pd(0.5), sign));
  const __m128i k32 = _mm256_cvttpd_epi32(kf);
  const __m256d t_b = _mm256_cvtepi32_pd(k32);
  const __m256d hi_b = _mm256_sub_pd(x, _mm256_mul_pd(t_b, ln2_hi));
  const __m256d lo_b = _mm256_mul_pd(t_b, ln2_lo);
  const __m256i k_b = _mm256_cvtepi32_epi64(k32);

  const __m256d wide_d = _mm256_castsi256_pd(wide), reduce_d = _mm256_castsi256_pd(reduce);
  const __m256d hi = _mm256_blendv_pd(hi_a, hi_b, wide_d);
  const __m256d lo = _mm256_blendv_pd(lo_a, lo_b, wide_d);
  const __m256i k = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(k_a), _mm256_castsi256_pd(k_b), wide_d));
  // The reduced argument (x itself where |x| <= ln2 / 2, k = 0).
  const __m256d r = _mm256_blendv_pd(x, _mm256_sub_pd(hi, lo), reduce_d);

  const __m256d t = _mm256_mul_pd(r, r);
  __m256d poly = _mm256_set1_pd(4.13813679705723846039e-08);
  poly = _mm256_add_pd(_mm256_set1_pd(-1.65339022054652515390e-06), _mm256_mul_pd(t, poly));
  poly = _mm256_add_pd(_mm256_set1_pd(6.61375632143793436117e-05), _mm256_mul_pd(t, poly));
  poly = _mm256_add_pd(_mm256_set1_pd(-2.77777777770155933842e-03), _mm256_mul_pd(t, poly));
  poly = _mm256_add_pd(_mm256_set1_pd(1.66666666666666019037e-01), _mm256_mul_pd(t, poly));
  const __m256d c = _mm256_sub_pd(r, _mm256_mul_pd(t, poly));
  // (r * c) / (2 - c); where k == 0 fdlibm divides by (c - 2): the same value negated, exactly.
  const __m256d d = _mm256_div_pd(_mm256_mul_pd(r, c), _mm256_sub_pd(_mm256_set1_pd(2.0), c));
  const __m256d neg = _mm256_set1_pd(-0.0);
  const __m256d y0 = _mm256_sub_pd(one, _mm256_sub_pd(_mm256_xor_pd(d, neg), r));
  const __m256d y = _mm256_sub_pd(one, _mm256_sub_pd(_mm256_sub_pd(lo, d), hi));
  const __m256d twopk = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(k, _mm256_set1_epi64x(1023)), 52));
  __m256d result = _mm256_blendv_pd(y0, _mm256_mul_pd(y, twopk), reduce_d);
  result = _mm256_blendv_pd(result, _mm256_add_pd(one, x), _mm256_castsi256_pd(tiny));
  return result;
}

inline __m256d widen4(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }

}  // namespace

float row_max_avx2(const float* row, int32_t n) {
  __m256 m0 = _mm256_set1_ps(-__builtin_inff()), m1 = m0;
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(row + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(row + i + 8));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(m0, m1));
  float max = lanes[0];
  for (int l = 1; l < 8; ++l)
    if (lanes[l] > max) max = lanes[l];
  for (; i < n; ++i)
    if (row[i] > max) max = row[i];
  return max;
}

bool finite_row_max_avx2(const float* row, int32_t n, float* max) {
  // A float is NaN or infinite iff its exponent bits are all set.
  const __m256i exponent = _mm256_set1_epi32(0x7F800000);
  __m256 m0 = _mm256_set1_ps(-__builtin_inff()), m1 = m0;
  __m256i bad = _mm256_setzero_si256();
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(row + i), b = _mm256_loadu_ps(row + i + 8);
    m0 = _mm256_max_ps(m0, a);
    m1 = _mm256_max_ps(m1, b);
    const __m256i ea = _mm256_and_si256(_mm256_castps_si256(a), exponent), eb = _mm256_and_si256(_mm256_castps_si256(b), exponent);
    bad = _mm256_or_si256(bad, _mm256_or_si256(_mm256_cmpeq_epi32(ea, exponent), _mm256_cmpeq_epi32(eb, exponent)));
  }
  bool finite = _mm256_testz_si256(bad, bad) != 0;
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(m0, m1));
  float m = lanes[0];
  for (int l = 1; l < 8; ++l)
    if (lanes[l] > m) m = lanes[l];
  for (; i < n; ++i) {
    finite &= __builtin_isfinite(row[i]);
    if (row[i] > m) m = row[i];
  }
  *max = m;
  return finite;
}

int32_t next_at_least_avx2(const float* row, int32_t from, int32_t n, float at_least) {
  const __m256 t = _mm256_set1_ps(at_least);
  int32_t i = from;
  for (; i + 8 <= n; i += 8) {
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(row + i), t, _CMP_GE_OQ));
    if (hit != 0) return i + __builtin_ctz(static_cast<unsigned>(hit));
  }
  while (i < n && row[i] < at_least) ++i;
  return i;
}

void exp_avx2(const double* x, double* out, int32_t n) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    int scalar;
    const __m256d v = _mm256_loadu_pd(x + i);
    _mm256_storeu_pd(out + i, exp4(v, scalar));
    for (int l = 0; l < 4; ++l)
      if (scalar & (1 << l)) out[i + l] = jsmath::exp(x[i + l]);
  }
  for (; i < n; ++i) out[i] = jsmath::exp(x[i]);
}

double sum_exp_minus_avx2(const float* row, int32_t n, double max) {
  const __m256d m = _mm256_set1_pd(max);
  double sum = 0;
  alignas(32) double w[4];
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    int scalar;
    const __m256d x = _mm256_sub_pd(widen4(row + i), m);
    _mm256_store_pd(w, exp4(x, scalar));
    if (scalar != 0)
      for (int l = 0; l < 4; ++l)
        if (scalar & (1 << l)) w[l] = jsmath::exp(static_cast<double>(row[i + l]) - max);
    // In index order, one add at a time: the JS sum's rounding.
    sum += w[0];
    sum += w[1];
    sum += w[2];
    sum += w[3];
  }
  for (; i < n; ++i) sum += jsmath::exp(static_cast<double>(row[i]) - max);
  return sum;
}

int32_t collect_candidates_avx2(const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                                SamplerScratch::Candidate* out, double* total) {
  const __m256d m = _mm256_set1_pd(max), f = _mm256_set1_pd(floor), temp = _mm256_set1_pd(temperature), mp = _mm256_set1_pd(min_p);
  int32_t count = 0;
  double sum = 0;  // the kept weights in order, one add at a time: the JS total's rounding
  alignas(32) double w[4];
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d logit = widen4(row + i);
    const __m256d kept = _mm256_cmp_pd(logit, f, _CMP_NLT_UQ);  // not (logit < floor)
    int mask = _mm256_movemask_pd(kept);
    if (mask == 0) continue;
    int scalar;
    const __m256d weight = exp4(_mm256_div_pd(_mm256_sub_pd(logit, m), temp), scalar);
    mask &= ~_mm256_movemask_pd(_mm256_cmp_pd(weight, mp, _CMP_LT_OQ)) | scalar;
    _mm256_store_pd(w, weight);
    for (int l = 0; l < 4; ++l) {
      if (!(mask & (1 << l))) continue;
      double value = w[l];
      if (scalar & (1 << l)) {
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
