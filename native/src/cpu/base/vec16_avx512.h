// 16 floats in one AVX-512 register: the vector type of the attention tile
// kernel (attention_tile.h) and the activations (activation_kernel.h) in their
// AVX-512 builds. The AVX2 builds have the same operations on two 8-float
// halves (vec16_avx2.h) and compute every value with the same operations in
// the same order, so both give the same bits.
#pragma once
#include <immintrin.h>

// GCC 12 warns that the "undefined" source operand inside the AVX-512 shuffle
// intrinsics is uninitialized (a false alarm: an unmasked shuffle never reads
// it). Only the AVX-512 attention and activation files include this header.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstdint>

namespace weft {
namespace {

struct Vec16 {
  __m512 v;
};

inline Vec16 vzero() { return {_mm512_setzero_ps()}; }
inline Vec16 vset1(float x) { return {_mm512_set1_ps(x)}; }
inline Vec16 vload(const float* p) { return {_mm512_loadu_ps(p)}; }
// 16 halves widened (exact).
inline Vec16 vload(const uint16_t* p) { return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))}; }
inline void vstore(float* p, Vec16 a) { _mm512_storeu_ps(p, a.v); }
inline Vec16 vadd(Vec16 a, Vec16 b) { return {_mm512_add_ps(a.v, b.v)}; }
inline Vec16 vmul(Vec16 a, Vec16 b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline Vec16 vdiv(Vec16 a, Vec16 b) { return {_mm512_div_ps(a.v, b.v)}; }
inline Vec16 vmin(Vec16 a, Vec16 b) { return {_mm512_min_ps(a.v, b.v)}; }
inline Vec16 vfma(Vec16 a, Vec16 b, Vec16 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }     // a * b + c
inline Vec16 vfnma(Vec16 a, Vec16 b, Vec16 c) { return {_mm512_fnmadd_ps(a.v, b.v, c.v)}; }   // c - a * b
// max(a, b) lane by lane; b where either is NaN (so vmax(constant, x) keeps a NaN x).
inline Vec16 vmax(Vec16 a, Vec16 b) { return {_mm512_max_ps(a.v, b.v)}; }
inline Vec16 vround(Vec16 a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
// 2^n for lanes holding integers n in [-127, 127] (-127 gives 0).
inline Vec16 vpow2(Vec16 n) {
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n.v), _mm512_set1_epi32(127)), 23);
  return {_mm512_castsi512_ps(bits)};
}
// Lanes outside [lo, hi) become -infinity.
inline Vec16 vmask_outside(Vec16 a, int lo, int hi) {
  const __mmask16 keep = static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
  return {_mm512_mask_blend_ps(keep, _mm512_set1_ps(-__builtin_inff()), a.v)};
}
// The lanes' maximum (exact, any order).
inline float vhmax(Vec16 a) { return _mm512_reduce_max_ps(a.v); }

// The lane sum by halving: lane j + lane j+8, then j + j+4, j + j+2, j + j+1.
inline float vhsum(Vec16 a) {
  const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(a.v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a.v), 1)));
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// Dot products of 16 keys (f32 or f16, rows of hd values, hd a multiple of
// 16) with a query: lane j of a per-key accumulator sums d = j, j + 16, ... in
// order (one FMA each), then the lanes are summed by vhsum's halving, 16 keys
// at once. In two halves of 8 keys; half_sums reduces one half as far as
// pairs of partial sums (128-bit lane l: keys l and 4 + l of the half), and
// join_halves finishes both halves into the 16 dots in key order.
inline __m512 half_sums(const __m512 acc[8]) {
  __m512 l1[4];  // lanes j and j+8: a pair of keys per register, 8 partial sums each
  for (int i = 0; i < 4; ++i)
    l1[i] = _mm512_add_ps(_mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  __m512 l2[2];  // j and j+4: four keys per register, one per 128-bit lane
  for (int i = 0; i < 2; ++i)
    l2[i] = _mm512_add_ps(_mm512_shuffle_f32x4(l1[2 * i], l1[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_f32x4(l1[2 * i], l1[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512d a = _mm512_castps_pd(l2[0]), b = _mm512_castps_pd(l2[1]);  // j and j+2
  return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
}

inline Vec16 join_halves(__m512 first, __m512 second) {
  // j and j+1: lane l holds keys l, 4 + l, 8 + l, 12 + l; then into key order.
  const __m512 sums = _mm512_add_ps(_mm512_shuffle_ps(first, second, _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_ps(first, second, _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return {_mm512_permutexvar_ps(order, sums)};
}

template <typename T>
inline Vec16 vdots16(const float* q, const T* keys, int hd) {
  __m512 halves[2];
  for (int h = 0; h < 2; ++h) {
    __m512 acc[8];
    for (int k = 0; k < 8; ++k) acc[k] = _mm512_setzero_ps();
    const T* base = keys + static_cast<size_t>(8 * h) * hd;
    for (int d = 0; d < hd; d += 16) {
      const __m512 qd = _mm512_loadu_ps(q + d);
      for (int k = 0; k < 8; ++k) acc[k] = _mm512_fmadd_ps(qd, vload(base + static_cast<size_t>(k) * hd + d).v, acc[k]);
    }
    halves[h] = half_sums(acc);
  }
  return join_halves(halves[0], halves[1]);
}

// vdots16 for two queries at once, each key load serving both (same bits as two calls).
constexpr bool kPairRows = true;
template <typename T>
inline void vdots16_pair(const float* q0, const float* q1, const T* keys, int hd, Vec16& dots0, Vec16& dots1) {
  __m512 halves0[2], halves1[2];
  for (int h = 0; h < 2; ++h) {
    __m512 acc0[8], acc1[8];
    for (int k = 0; k < 8; ++k) acc0[k] = acc1[k] = _mm512_setzero_ps();
    const T* base = keys + static_cast<size_t>(8 * h) * hd;
    for (int d = 0; d < hd; d += 16) {
      const __m512 qa = _mm512_loadu_ps(q0 + d), qb = _mm512_loadu_ps(q1 + d);
      for (int k = 0; k < 8; ++k) {
        const __m512 key = vload(base + static_cast<size_t>(k) * hd + d).v;
        acc0[k] = _mm512_fmadd_ps(qa, key, acc0[k]);
        acc1[k] = _mm512_fmadd_ps(qb, key, acc1[k]);
      }
    }
    halves0[h] = half_sums(acc0);
    halves1[h] = half_sums(acc1);
  }
  dots0 = join_halves(halves0[0], halves0[1]);
  dots1 = join_halves(halves1[0], halves1[1]);
}

// Vectors of 16 held in registers per pass over a row's output (8: 128 floats).
constexpr int kOutVectors = 8;

}  // namespace
}  // namespace weft
