// The row-group kernels for Q8_0 and Q4_0 (layout: quant_repack.h), included
// by quant_avx2.cc, quant_avxvnni.cc and quant_avx512vnni.cc after each
// defines its integer step:
//   WEFT_GROUP_DPBUSD(acc, u, x)  (VNNI sets): acc + vpdpbusd(u8 u, s8 x)
//   otherwise (AVX2): maddubs + madd, with the sign trick for Q8_0
// and WEFT_GROUP_TOKENS, the tokens per register tile (bounded by the number
// of vector registers: two per token, the block sum and the accumulator).
//
// Per output (row r, token t) every kernel set, the baseline in quant.cc
// included, computes exactly
//   acc = 0;  for each unit u:  acc += (d[r][u] * xs[t][u]) * float(p)
//   out = acc + (bias ? bias[r] : 0)
// where p = sum of q * x over the unit's 32 weights: an exact int32 (|p| <
// 2^24, so float(p) is exact too), however it is summed. Float ops are those
// of the baseline, with FMA contraction off (CMakeLists.txt): bit-identical.
//
// Weight-stationary: each group is read from memory once per matmul and used
// for every token (the other token tiles find it in L1/L2); one vpdpbusd
// serves 8 rows; no horizontal sums.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"

namespace weft {
namespace {

inline __attribute__((always_inline)) __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

constexpr int kPrefetchAhead = 2048;

// TB tokens from t0 against one group of 8 rows (`rows` of them real).
// Units [u0, u1) of the row: the accumulators start at 0 (u0 == 0) or from
// `partial`, and end in `partial` (u1 < units) or as outputs.
template <WeightType W, int TB>
inline __attribute__((always_inline)) void group_tile(const uint8_t* g, int units, int u0, int u1, const QuantizedInput& x,
                                                      int t0, float* partial, float* out, size_t N, const float* bias,
                                                      int rows) {
  constexpr size_t kUnitBytes = W == WeightType::Q8_0 ? 256 : 128;
#if defined(WEFT_GROUP_DPBUSD)
  constexpr bool kSignTrick = false;
#else
  constexpr bool kSignTrick = W == WeightType::Q8_0;
#endif
  __m256 acc[TB];
  for (int t = 0; t < TB; ++t) acc[t] = u0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(partial + (t0 + t) * kGroupRows);
  for (int u = u0; u < u1; ++u) {
    const uint8_t* scales = g + u * (16 + kUnitBytes);
    const uint8_t* wu = scales + 16;
    // The first token tile prefetches the weights 2 KB ahead (into the next
    // group at a group's end): one-stream Q8_0 decode ran 1.3x faster with it
    // on Zen 3 / AVX2 (1 and 4 KB were no better); later tiles hit in cache.
    if (t0 == 0)
      for (int l = 0; l < static_cast<int>(16 + kUnitBytes); l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(scales + kPrefetchAhead + l), _MM_HINT_T0);
    const int8_t* xq[TB];
    __m256i p[TB];
    for (int t = 0; t < TB; ++t) {
      const size_t at = static_cast<size_t>(t0 + t) * units + u;
      xq[t] = x.q + at * kQuantUnit;
      // u = q + offset: start from - offset * sum(x) (the AVX2 Q8_0 path sums q * x itself).
      p[t] = kSignTrick ? _mm256_setzero_si256() : _mm256_set1_epi32(x.offset_sum[at]);
    }
    if constexpr (W == WeightType::Q8_0) {
      for (int c = 0; c < 8; ++c) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wu + 32 * c));
#if defined(WEFT_GROUP_DPBUSD)
        for (int t = 0; t < TB; ++t) p[t] = WEFT_GROUP_DPBUSD(p[t], w, broadcast4(xq[t] + 4 * c));
#else
        // maddubs saturates u8 x s8 pairs past 32767, so multiply |q| (<= 128)
        // by x with q's sign (|x| <= 127): per pair <= 2 * 128 * 127.
        const __m256i q = _mm256_xor_si256(w, _mm256_set1_epi8(static_cast<char>(0x80)));
        const __m256i a = _mm256_sign_epi8(q, q);
        for (int t = 0; t < TB; ++t) {
          const __m256i pairs = _mm256_maddubs_epi16(a, _mm256_sign_epi8(broadcast4(xq[t] + 4 * c), q));
          p[t] = _mm256_add_epi32(p[t], _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
        }
#endif
      }
    } else {  // Q4_0: nibbles are u (0..15) directly
      const __m256i low4 = _mm256_set1_epi8(0x0f);
#if defined(WEFT_GROUP_DPBUSD)
      for (int v = 0; v < 4; ++v) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wu + 32 * v));
        const __m256i lo = _mm256_and_si256(raw, low4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
        for (int t = 0; t < TB; ++t) {
          p[t] = WEFT_GROUP_DPBUSD(p[t], lo, broadcast4(xq[t] + 4 * v));
          p[t] = WEFT_GROUP_DPBUSD(p[t], hi, broadcast4(xq[t] + 16 + 4 * v));
        }
      }
#else
      // u * x pairs are <= 2 * 15 * 127, so all 8 chunks add up in int16
      // (<= 30480) before one madd.
      __m256i s16[TB];
      for (int t = 0; t < TB; ++t) s16[t] = _mm256_setzero_si256();
      for (int v = 0; v < 4; ++v) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wu + 32 * v));
        const __m256i lo = _mm256_and_si256(raw, low4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
        for (int t = 0; t < TB; ++t) {
          s16[t] = _mm256_add_epi16(s16[t], _mm256_maddubs_epi16(lo, broadcast4(xq[t] + 4 * v)));
          s16[t] = _mm256_add_epi16(s16[t], _mm256_maddubs_epi16(hi, broadcast4(xq[t] + 16 + 4 * v)));
        }
      }
      for (int t = 0; t < TB; ++t) p[t] = _mm256_add_epi32(p[t], _mm256_madd_epi16(s16[t], _mm256_set1_epi16(1)));
#endif
    }
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
    for (int t = 0; t < TB; ++t) {
      const __m256 ls = _mm256_mul_ps(d, _mm256_set1_ps(x.scale[static_cast<size_t>(t0 + t) * units + u]));
      acc[t] = _mm256_add_ps(acc[t], _mm256_mul_ps(ls, _mm256_cvtepi32_ps(p[t])));
    }
  }
  if (u1 < units) {
    for (int t = 0; t < TB; ++t) _mm256_storeu_ps(partial + (t0 + t) * kGroupRows, acc[t]);
    return;
  }
  __m256 b = _mm256_setzero_ps();
  if (bias) {
    if (rows == kGroupRows) b = _mm256_loadu_ps(bias);
    else {
      float part[kGroupRows] = {};
      for (int r = 0; r < rows; ++r) part[r] = bias[r];
      b = _mm256_loadu_ps(part);
    }
  }
  for (int t = 0; t < TB; ++t) {
    const __m256 o = _mm256_add_ps(acc[t], b);
    float* to = out + static_cast<size_t>(t0 + t) * N;
    if (rows == kGroupRows) _mm256_storeu_ps(to, o);
    else {
      float part[kGroupRows];
      _mm256_storeu_ps(part, o);
      for (int r = 0; r < rows; ++r) to[r] = part[r];
    }
  }
}

// The last T % TB tokens, as one smaller tile.
template <WeightType W, int TB>
inline __attribute__((always_inline)) void group_rest(const uint8_t* g, int units, int u0, int u1, const QuantizedInput& x,
                                                      int t0, int count, float* partial, float* out, size_t N,
                                                      const float* bias, int rows) {
  if constexpr (TB > 1) {
    if (count == TB - 1) return group_tile<W, TB - 1>(g, units, u0, u1, x, t0, partial, out, N, bias, rows);
    group_rest<W, TB - 1>(g, units, u0, u1, x, t0, count, partial, out, N, bias, rows);
  }
}

// Units per pass over the activations: 32 (1024 weights) keep a pass's
// weights (8.5 KB of Q8_0 per group) and a token tile's activations in L1.
#if !defined(WEFT_GROUP_UNITS_PER_PASS)
#define WEFT_GROUP_UNITS_PER_PASS 32
#endif
constexpr int kGroupUnitsPerPass = WEFT_GROUP_UNITS_PER_PASS;

// Groups [g0, g1) for all T tokens; group N / 8, when N % 8 rows are left,
// is `tail` (those rows packed, quant_repack.h). Long rows go in passes of
// kGroupUnitsPerPass units over all groups of the range, so that the pass's
// activations stay in cache while the weights stream; the accumulators wait
// in `partial` between passes (the per-output order is unchanged). A step of
// one token tile reuses no weight, so it makes one pass: the weights then
// stream front to back instead of a third of each group at a time (K = 3072),
// and nothing is allocated.
template <WeightType W>
inline void group_rows(float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail, const float* bias,
                       int T, int N, int K, size_t g0, size_t g1) {
  constexpr int TB = WEFT_GROUP_TOKENS;
  const int units = K / kQuantUnit;
  const size_t group_bytes = kGroupRows * quant_row_bytes(W, K);
  // Allocated per call (only for rows of more than one pass): a buffer kept
  // per thread instead (thread_local, no allocation) made GCC compile this
  // function's loops less well, 14% more instructions at 16 tokens (callgrind).
  const int per_pass = T <= TB ? units : kGroupUnitsPerPass;
  std::vector<float> partial(units > per_pass ? (g1 - g0) * T * kGroupRows : 0);
  for (int u0 = 0; u0 < units; u0 += per_pass) {
    const int u1 = std::min(units, u0 + per_pass);
    for (size_t gi = g0; gi < g1; ++gi) {
      const size_t n = gi * kGroupRows;
      const int rows = static_cast<int>(std::min<size_t>(kGroupRows, N - n));
      const uint8_t* g = rows == kGroupRows ? w + gi * group_bytes : tail;
      const float* b = bias ? bias + n : nullptr;
      float* p = partial.empty() ? nullptr : &partial[(gi - g0) * T * kGroupRows];
      int t = 0;
      for (; t + TB <= T; t += TB) group_tile<W, TB>(g, units, u0, u1, x, t, p, out + n, N, b, rows);
      if (t < T) group_rest<W, TB>(g, units, u0, u1, x, t, T - t, p, out + n, N, b, rows);
    }
  }
}

inline void group_rows_any(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                           const float* bias, int T, int N, int K, size_t g0, size_t g1) {
  if (type == WeightType::Q8_0) group_rows<WeightType::Q8_0>(out, x, w, tail, bias, T, N, K, g0, g1);
  else group_rows<WeightType::Q4_0>(out, x, w, tail, bias, T, N, K, g0, g1);
}

}  // namespace
}  // namespace weft
