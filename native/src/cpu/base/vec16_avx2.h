// 16 floats as two AVX2 registers (lanes 0-7, 8-15): the vector type of the
// attention tile kernel (attention_tile.h) and the activations
// (activation_kernel.h) in their AVX2 builds. Every operation matches
// vec16_avx512.h lane for lane and sum for sum, so both builds give the same bits.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace weft {
namespace {

struct Vec16 {
  __m256 lo, hi;
};

inline Vec16 vzero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline Vec16 vset1(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
inline Vec16 vload(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
// 8 floats, or 8 halves widened (exact).
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline Vec16 vload(const uint16_t* p) { return {load8(p), load8(p + 8)}; }
inline void vstore(float* p, Vec16 a) {
  _mm256_storeu_ps(p, a.lo);
  _mm256_storeu_ps(p + 8, a.hi);
}
inline Vec16 vadd(Vec16 a, Vec16 b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
inline Vec16 vmul(Vec16 a, Vec16 b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
inline Vec16 vdiv(Vec16 a, Vec16 b) { return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)}; }
inline Vec16 vmin(Vec16 a, Vec16 b) { return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)}; }
inline Vec16 vfma(Vec16 a, Vec16 b, Vec16 c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
inline Vec16 vfnma(Vec16 a, Vec16 b, Vec16 c) { return {_mm256_fnmadd_ps(a.lo, b.lo, c.lo), _mm256_fnmadd_ps(a.hi, b.hi, c.hi)}; }
// max(a, b) lane by lane; b where either is NaN (so vmax(constant, x) keeps a NaN x).
inline Vec16 vmax(Vec16 a, Vec16 b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
inline Vec16 vround(Vec16 a) {
  constexpr int mode = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  return {_mm256_round_ps(a.lo, mode), _mm256_round_ps(a.hi, mode)};
}
// 2^n for lanes holding integers n in [-127, 127] (-127 gives 0).
inline __m256 pow2_half(__m256 n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
inline Vec16 vpow2(Vec16 n) { return {pow2_half(n.lo), pow2_half(n.hi)}; }
// Lanes outside [lo, hi) become -infinity.
inline Vec16 vmask_outside(Vec16 a, int lo, int hi) {
  const __m256i lane_lo = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), lane_hi = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
  const __m256i from = _mm256_set1_epi32(lo - 1), to = _mm256_set1_epi32(hi);
  const __m256 ninf = _mm256_set1_ps(-__builtin_inff());
  // keep where lane > lo - 1 and to > lane
  const __m256 keep_lo = _mm256_castsi256_ps(_mm256_and_si256(_mm256_cmpgt_epi32(lane_lo, from), _mm256_cmpgt_epi32(to, lane_lo)));
  const __m256 keep_hi = _mm256_castsi256_ps(_mm256_and_si256(_mm256_cmpgt_epi32(lane_hi, from), _mm256_cmpgt_epi32(to, lane_hi)));
  return {_mm256_blendv_ps(ninf, a.lo, keep_lo), _mm256_blendv_ps(ninf, a.hi, keep_hi)};
}
// The lanes' maximum (exact, any order).
inline float vhmax(Vec16 a) {
  const __m256 m8 = _mm256_max_ps(a.lo, a.hi);
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// The lane sum by halving: lane j + lane j+8, then j + j+4, j + j+2, j + j+1.
inline float vhsum(Vec16 a) {
  const __m256 s8 = _mm256_add_ps(a.lo, a.hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// Four keys' dot products with q, reduced as far as pairs of partial sums:
// 128-bit lane 0 holds keys 0 and 2, lane 1 keys 1 and 3 (two sums each).
template <typename T>
inline __m256 dots4_partial(const float* q, const T* keys, int hd) {
  __m256 lo[4], hi[4];
  for (int k = 0; k < 4; ++k) lo[k] = hi[k] = _mm256_setzero_ps();
  for (int d = 0; d < hd; d += 16) {
    const __m256 qlo = _mm256_loadu_ps(q + d), qhi = _mm256_loadu_ps(q + d + 8);
    for (int k = 0; k < 4; ++k) {
      lo[k] = _mm256_fmadd_ps(qlo, load8(keys + static_cast<size_t>(k) * hd + d), lo[k]);
      hi[k] = _mm256_fmadd_ps(qhi, load8(keys + static_cast<size_t>(k) * hd + d + 8), hi[k]);
    }
  }
  __m256 t[4];  // lanes j and j+8
  for (int k = 0; k < 4; ++k) t[k] = _mm256_add_ps(lo[k], hi[k]);
  __m256 b[2];  // j and j+4: 128-bit lane 0 key 2i, lane 1 key 2i+1
  for (int i = 0; i < 2; ++i)
    b[i] = _mm256_add_ps(_mm256_permute2f128_ps(t[2 * i], t[2 * i + 1], 0x20), _mm256_permute2f128_ps(t[2 * i], t[2 * i + 1], 0x31));
  // j and j+2
  const __m256d x = _mm256_castps_pd(b[0]), y = _mm256_castps_pd(b[1]);
  return _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(x, y)), _mm256_castpd_ps(_mm256_unpackhi_pd(x, y)));
}

// Eight keys' dot products, in key order.
template <typename T>
inline __m256 dots8(const float* q, const T* keys, int hd) {
  const __m256 a = dots4_partial(q, keys, hd), b = dots4_partial(q, keys + 4 * static_cast<size_t>(hd), hd);
  // j and j+1: lane 0 keys 0, 2, 4, 6; lane 1 keys 1, 3, 5, 7.
  const __m256 s = _mm256_add_ps(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm256_permutevar8x32_ps(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// dots[k] = sum over d of q[d] * keys[k * hd + d] for 16 keys (f32 or f16),
// hd a multiple of 16: lane j of a per-key accumulator sums d = j, j + 16, ...
// in order (one FMA each), then the lanes are summed by vhsum's halving.
template <typename T>
inline Vec16 vdots16(const float* q, const T* keys, int hd) {
  return {dots8(q, keys, hd), dots8(q, keys + 8 * static_cast<size_t>(hd), hd)};
}

// Two rows at once would need more than 16 registers: one at a time.
constexpr bool kPairRows = false;
template <typename T>
inline void vdots16_pair(const float* q0, const float* q1, const T* keys, int hd, Vec16& dots0, Vec16& dots1) {
  dots0 = vdots16(q0, keys, hd);
  dots1 = vdots16(q1, keys, hd);
}

// Vectors of 16 held in registers per pass over a row's output (4: 64 floats, 8 registers).
constexpr int kOutVectors = 4;

}  // namespace
}  // namespace weft
