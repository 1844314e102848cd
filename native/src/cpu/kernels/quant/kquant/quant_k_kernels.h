// The Q4_K / Q6_K GGUF-row kernels (what weft ran before the k-groups of
// quant_k_group_kernels.h; kept for comparisons in bench/quant-kernels), for
// AVX2-class CPUs, included by
// quant_k_avx2.cc, quant_k_avxvnni.cc and quant_k_avx512vnni.cc. Each defines
// WEFT_KQ_ACC(acc, p, s): acc (8 int32) + madd(p, s) (pairs of int16
// products), madd + add on AVX2, one vpdpwssd with VNNI; no term ever
// overflows, so all give the same integers. Weights are unsigned (Q4_K's
// nibble, Q6_K's 6-bit value + 32) against signed int8 activations, so one
// maddubs per 32 weights never saturates (|pair| <= 2 * 63 * 127). The float
// steps, once per super-block, are those of the baseline (quant_k.cc) in its
// order, with FMA contraction off (CMakeLists.txt): bit-identical.
//
// Their order, per output and super-block, with lanes l = 0..7 (lane l of
// unit j covers weights 32j + 4l .. 32j + 4l + 3):
//   Q4_K: isum[l] = sum_j sc[j] * (q_j . x over lane l)       (q = nibble 0..15)
//         msum[l] = m[l] * (xsum16[2l] + xsum16[2l + 1])     (the mins)
//         acc[l] += (d * xd) * float(isum[l]) - (dmin * xd) * float(msum[l])
//   Q6_K: isum[l] = sum_j sc[2j + l/4] * (u_j . x over lane l) - 32 * (sc[2l] * xsum16[2l] + sc[2l+1] * xsum16[2l+1])
//         acc[l] += (d * xd) * float(isum[l])
//   out = ((acc0 + acc1) + (acc2 + acc3)) + ((acc4 + acc5) + (acc6 + acc7)) + bias
#pragma once
#include <immintrin.h>

#include <algorithm>

#include "kernels/quant/kquant/kquant_formats.h"
#include "kernels/quant/quant_formats.h"

#if defined(__GNUC__)
#define WEFT_KINLINE inline __attribute__((always_inline))
#else
#define WEFT_KINLINE inline
#endif

namespace weft {
namespace {

WEFT_KINLINE __m256i load256(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
WEFT_KINLINE float half_at(const uint8_t* p) { return _cvtsh_ss(read_u16(p)); }

// ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)), as the baseline adds them.
WEFT_KINLINE float lane_total(__m256 v) {
  float a[8];
  _mm256_storeu_ps(a, v);
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// vpshufb masks that put int16 element e of each 128-bit half in all eight
// positions of that half: kSpread[i] takes element low(i) to the low half and
// high(i) to the high half. Q4_K unit j: (j, j) = kSpread[j]; Q6_K quarter q
// of a half: (2q, 2q + 1) = kSpread[8 + q]. A table, so the loop reads them
// as memory operands instead of rebuilding them.
struct alignas(32) SpreadMask {
  uint8_t b[32];
};
constexpr SpreadMask spread_mask(int low_e, int high_e) {
  SpreadMask m{};
  for (int i = 0; i < 16; ++i) {
    m.b[i] = static_cast<uint8_t>(2 * low_e + (i & 1));
    m.b[16 + i] = static_cast<uint8_t>(2 * high_e + (i & 1));
  }
  return m;
}
alignas(32) constexpr SpreadMask kSpread[12] = {
    spread_mask(0, 0), spread_mask(1, 1), spread_mask(2, 2), spread_mask(3, 3),
    spread_mask(4, 4), spread_mask(5, 5), spread_mask(6, 6), spread_mask(7, 7),
    spread_mask(0, 1), spread_mask(2, 3), spread_mask(4, 5), spread_mask(6, 7),
};
WEFT_KINLINE __m256i spread(int i) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(kSpread[i].b)); }

// One Q4_K row against tokens t0 .. t0 + TB - 1: each super-block is unpacked
// once (scales, nibbles) and used for all TB tokens.
template <int TB>
WEFT_KINLINE void q4k_tile(const uint8_t* row, const KQuantInput& x, int t0, int blocks, float* out, size_t N, float bias) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256 acc[TB];
  for (int t = 0; t < TB; ++t) acc[t] = _mm256_setzero_ps();
  for (int blk = 0; blk < blocks; ++blk) {
    const uint8_t* b = row + static_cast<size_t>(blk) * 144;
    uint32_t words[4];  // scales 0-3, 4-7, mins 0-3, 4-7
    q4k_unpack_scale_words(b + 4, words);
    const __m128i packed = _mm_set_epi32(static_cast<int>(words[3]), static_cast<int>(words[2]), static_cast<int>(words[1]),
                                         static_cast<int>(words[0]));
    const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(packed));
    const __m128i m8 = _mm_unpackhi_epi64(packed, packed);
    const __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));  // m0 m0 m1 m1 .. m7 m7
    const int8_t* xq[TB];
    for (int t = 0; t < TB; ++t) xq[t] = x.q + (static_cast<size_t>(t0 + t) * blocks + blk) * kSuperBlock;
    __m256i isum[TB];
    for (int t = 0; t < TB; ++t) isum[t] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i qv = load256(b + 16 + 32 * c);
      const __m256i lo = _mm256_and_si256(qv, low4), hi = _mm256_and_si256(_mm256_srli_epi16(qv, 4), low4);
      const __m256i s_lo = _mm256_shuffle_epi8(sc16, spread(2 * c));
      const __m256i s_hi = _mm256_shuffle_epi8(sc16, spread(2 * c + 1));
      for (int t = 0; t < TB; ++t) {
        isum[t] = WEFT_KQ_ACC(isum[t], _mm256_maddubs_epi16(lo, load256(xq[t] + 64 * c)), s_lo);
        isum[t] = WEFT_KQ_ACC(isum[t], _mm256_maddubs_epi16(hi, load256(xq[t] + 64 * c + 32)), s_hi);
      }
    }
    const float d = half_at(b), dmin = half_at(b + 2);
    for (int t = 0; t < TB; ++t) {
      const size_t at = static_cast<size_t>(t0 + t) * blocks + blk;
      const __m256i msum = _mm256_madd_epi16(m16, load256(x.sum16 + at * 16));
      const __m256 fd = _mm256_set1_ps(d * x.d[at]), fm = _mm256_set1_ps(dmin * x.d[at]);
      acc[t] = _mm256_add_ps(acc[t], _mm256_sub_ps(_mm256_mul_ps(fd, _mm256_cvtepi32_ps(isum[t])),
                                                   _mm256_mul_ps(fm, _mm256_cvtepi32_ps(msum))));
    }
  }
  for (int t = 0; t < TB; ++t) out[static_cast<size_t>(t) * N] = lane_total(acc[t]) + bias;
}

// One Q6_K row against tokens t0 .. t0 + TB - 1.
template <int TB>
WEFT_KINLINE void q6k_tile(const uint8_t* row, const KQuantInput& x, int t0, int blocks, float* out, size_t N, float bias) {
  const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
  __m256 acc[TB];
  for (int t = 0; t < TB; ++t) acc[t] = _mm256_setzero_ps();
  for (int blk = 0; blk < blocks; ++blk) {
    const uint8_t* b = row + static_cast<size_t>(blk) * 210;
    const int8_t* xq[TB];
    __m256i isum[TB];
    const __m256i sc_all = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192)));
    for (int t = 0; t < TB; ++t) {
      const size_t at = static_cast<size_t>(t0 + t) * blocks + blk;
      xq[t] = x.q + at * kSuperBlock;
      // -32 * sum of sc * x: the +32 offset of the unsigned 6-bit values.
      isum[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc_all, load256(x.sum16 + at * 16)), 5));
    }
    for (int h = 0; h < 2; ++h) {
      const __m256i sc16 = _mm256_broadcastsi128_si256(
          _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 192 + 8 * h))));
      const __m256i l0 = load256(b + 64 * h), l1 = load256(b + 64 * h + 32), qh = load256(b + 128 + 32 * h);
      for (int q = 0; q < 4; ++q) {
        const __m256i lowbits = q == 0 ? _mm256_and_si256(l0, low4)
                                : q == 1 ? _mm256_and_si256(l1, low4)
                                : q == 2 ? _mm256_and_si256(_mm256_srli_epi16(l0, 4), low4)
                                         : _mm256_and_si256(_mm256_srli_epi16(l1, 4), low4);
        const __m256i highbits = q == 0 ? _mm256_slli_epi16(qh, 4)
                                 : q == 1 ? _mm256_slli_epi16(qh, 2)
                                 : q == 2 ? qh
                                          : _mm256_srli_epi16(qh, 2);
        const __m256i u = _mm256_or_si256(lowbits, _mm256_and_si256(highbits, bits45));
        const __m256i s = _mm256_shuffle_epi8(sc16, spread(8 + q));
        for (int t = 0; t < TB; ++t)
          isum[t] = WEFT_KQ_ACC(isum[t], _mm256_maddubs_epi16(u, load256(xq[t] + 128 * h + 32 * q)), s);
      }
    }
    const float d = half_at(b + 208);
    for (int t = 0; t < TB; ++t) {
      const size_t at = static_cast<size_t>(t0 + t) * blocks + blk;
      acc[t] = _mm256_add_ps(acc[t], _mm256_mul_ps(_mm256_set1_ps(d * x.d[at]), _mm256_cvtepi32_ps(isum[t])));
    }
  }
  for (int t = 0; t < TB; ++t) out[static_cast<size_t>(t) * N] = lane_total(acc[t]) + bias;
}

template <WeightType W, int TB>
WEFT_KINLINE void k_tile(const uint8_t* row, const KQuantInput& x, int t0, int blocks, float* out, size_t N, float bias) {
  if constexpr (W == WeightType::Q4_K) q4k_tile<TB>(row, x, t0, blocks, out, N, bias);
  else q6k_tile<TB>(row, x, t0, blocks, out, N, bias);
}

// Rows [n0, n1) for all T tokens, weight-stationary: each row is read from
// memory once per step and used for every token, TB tokens per pass over the
// row. Rows go in groups of kRowGroup (~10-30 KB of weights, kept in L1/L2)
// and each TB-token tile of activations visits the whole group before the
// next tile, so a long prefill streams its activations from L1, not once per
// row from L2. The order of operations per output is the same either way.
template <WeightType W>
WEFT_KINLINE void k_rows(float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N, int K, size_t n0,
                         size_t n1) {
  constexpr int TB = 4;
  constexpr size_t kRowGroup = 16;
  const size_t row_bytes = quant_row_bytes(W, K);
  const int blocks = K / kSuperBlock;
  for (size_t g0 = n0; g0 < n1; g0 += kRowGroup) {
    const size_t g1 = std::min(n1, g0 + kRowGroup);
    int t = 0;
    for (; t + TB <= T; t += TB)
      for (size_t n = g0; n < g1; ++n)
        k_tile<W, TB>(w + n * row_bytes, x, t, blocks, out + static_cast<size_t>(t) * N + n, N, bias ? bias[n] : 0.0f);
    for (; t < T; ++t)
      for (size_t n = g0; n < g1; ++n)
        k_tile<W, 1>(w + n * row_bytes, x, t, blocks, out + static_cast<size_t>(t) * N + n, N, bias ? bias[n] : 0.0f);
  }
}

WEFT_KINLINE void k_rows_any(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                             int N, int K, size_t n0, size_t n1) {
  if (type == WeightType::Q4_K) k_rows<WeightType::Q4_K>(out, x, w, bias, T, N, K, n0, n1);
  else if (type == WeightType::Q6_K) k_rows<WeightType::Q6_K>(out, x, w, bias, T, N, K, n0, n1);
}

}  // namespace
}  // namespace weft
