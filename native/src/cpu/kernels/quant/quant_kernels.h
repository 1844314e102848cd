// The quantized matmul kernel for AVX2-class CPUs, included by quant_avx2.cc,
// quant_avxvnni.cc and quant_avx512vnni.cc. Each defines WEFT_DOT_U8S8(a, b):
// eight int32 lanes, lane j = sum over i < 4 of a[4j + i] (unsigned) * b[4j + i]
// (signed): maddubs + madd on AVX2, vpdpbusd with VNNI. The inputs stay small
// enough (|a| <= 128, |b| <= 127) that maddubs never saturates, so all three
// give the same integers, and the float steps below are those of the baseline
// kernel (quant.cc), with FMA contraction off (CMakeLists.txt): bit-identical.
#pragma once
#include <immintrin.h>

#include "kernels/quant/quant_formats.h"


#if defined(__GNUC__)
#define WEFT_QINLINE inline __attribute__((always_inline))
#else
#define WEFT_QINLINE inline
#endif

namespace weft {
namespace {

// The f16 scales of the block holding a unit, read once per block. F16C
// converts exactly, as f16_to_f32 does.
struct BlockScales {
  float d = 0, dmin = 0;
};

WEFT_QINLINE float half_to_float(const uint8_t* p) { return _cvtsh_ss(read_u16(p)); }

template <WeightType W>
WEFT_QINLINE BlockScales block_scales(const uint8_t* b) {
  if constexpr (W == WeightType::Q6_K) return {half_to_float(b + 208), 0};
  else if constexpr (W == WeightType::Q4_K) return {half_to_float(b), half_to_float(b + 2)};
  else return {half_to_float(b), 0};
}

// Unit j of block b: 32 integers (signed, or unsigned 0..15 for Q4_K), the
// per-lane scale (lanes 0-3 cover weights 0..15, lanes 4-7 weights 16..31) and
// the min. The same values as decode_unit (quant_formats.h).
template <WeightType W>
WEFT_QINLINE __m256i load_unit(const uint8_t* b, int j, const BlockScales& bs, __m256* scale, float* min) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  if constexpr (W == WeightType::Q8_0) {
    *scale = _mm256_set1_ps(bs.d);
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2));
  } else if constexpr (W == WeightType::Q4_0) {
    *scale = _mm256_set1_ps(bs.d);
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
    return _mm256_sub_epi8(_mm256_and_si256(both, low4), _mm256_set1_epi8(8));
  } else if constexpr (W == WeightType::Q4_K) {
    int sc, m;
    q4k_scale_min(b + 4, j, &sc, &m);
    *scale = _mm256_set1_ps(bs.d * static_cast<float>(sc));
    *min = bs.dmin * static_cast<float>(m);
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * (j / 2)));
    return _mm256_and_si256(j % 2 ? _mm256_srli_epi16(qs, 4) : qs, low4);
  } else {  // Q6_K
    const int half = j / 4, quarter = j % 4;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192) + 8 * half + 2 * quarter;
    *scale = _mm256_set_m128(_mm_set1_ps(bs.d * static_cast<float>(sc[1])), _mm_set1_ps(bs.d * static_cast<float>(sc[0])));
    const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * half + 32 * (quarter % 2)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * half));
    const __m256i low = _mm256_and_si256(quarter >= 2 ? _mm256_srli_epi16(ql, 4) : ql, low4);
    const __m256i high = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * quarter)), _mm256_set1_epi8(3));
    return _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(high, 4)), _mm256_set1_epi8(32));
  }
}

// TB tokens against RB weight rows (RB x TB outputs, out[t * N + r]). Rows
// side by side keep more memory reads in flight and share each activation
// load; every output's own sequence of operations is that of the baseline.
template <WeightType W, int RB, int TB>
WEFT_QINLINE void tile(const uint8_t* rows, size_t row_bytes, const QuantizedInput& x, int t0, int K, float* out, size_t N,
                       const float* bias) {
  constexpr bool kUnsigned = W == WeightType::Q4_K;
  constexpr BlockFormat kFormat = block_format(W);
  constexpr int kPerBlock = kFormat.weights / kQuantUnit;  // units per block: 1 or 8
  const int units = K / kQuantUnit;
  __m256 acc[TB][RB][2];
  float mins[TB][RB][2];
  for (int t = 0; t < TB; ++t)
    for (int r = 0; r < RB; ++r) acc[t][r][0] = acc[t][r][1] = _mm256_setzero_ps(), mins[t][r][0] = mins[t][r][1] = 0;
  // Unit j of block blk (unit u of the row) into the even or odd accumulators.
  auto step = [&](int blk, int j, const BlockScales* bs, int u, int slot) {
    __m256i q[RB], a[RB];
    __m256 ws[RB];
    float wmin[RB];
    for (int r = 0; r < RB; ++r) {
      wmin[r] = 0;
      q[r] = load_unit<W>(rows + r * row_bytes + static_cast<size_t>(blk) * kFormat.bytes, j, bs[r], &ws[r], &wmin[r]);
      a[r] = kUnsigned ? q[r] : _mm256_sign_epi8(q[r], q[r]);  // |q| (-128 reads as 128 unsigned)
    }
    for (int t = 0; t < TB; ++t) {
      const size_t at = static_cast<size_t>(t0 + t) * units + u;
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + at * kQuantUnit));
      const __m256 xs = _mm256_set1_ps(x.scale[at]);
      for (int r = 0; r < RB; ++r) {
        const __m256i bv = kUnsigned ? xv : _mm256_sign_epi8(xv, q[r]);  // x with q's sign
        const __m256i p = WEFT_DOT_U8S8(a[r], bv);
        const __m256 ls = _mm256_mul_ps(ws[r], xs);
        acc[t][r][slot] = _mm256_add_ps(acc[t][r][slot], _mm256_mul_ps(ls, _mm256_cvtepi32_ps(p)));
        if (kUnsigned) mins[t][r][slot] += (wmin[r] * x.scale[at]) * static_cast<float>(x.sum[at]);
      }
    }
  };
  BlockScales bs[RB];
  auto scales_of = [&](int blk) {
    for (int r = 0; r < RB; ++r) bs[r] = block_scales<W>(rows + r * row_bytes + static_cast<size_t>(blk) * kFormat.bytes);
  };
  if constexpr (kPerBlock == 1) {
    int u = 0;
    for (; u + 2 <= units; u += 2) {
      scales_of(u);
      step(u, 0, bs, u, 0);
      scales_of(u + 1);
      step(u + 1, 0, bs, u + 1, 1);
    }
    if (u < units) {
      scales_of(u);
      step(u, 0, bs, u, 0);
    }
  } else {
    for (int blk = 0; blk < K / kFormat.weights; ++blk) {
      scales_of(blk);
      for (int j = 0; j < kPerBlock; j += 2) {
        step(blk, j, bs, blk * kPerBlock + j, 0);
        step(blk, j + 1, bs, blk * kPerBlock + j + 1, 1);
      }
    }
  }
  for (int t = 0; t < TB; ++t)
    for (int r = 0; r < RB; ++r) {
      float lanes[8];
      _mm256_storeu_ps(lanes, _mm256_add_ps(acc[t][r][0], acc[t][r][1]));
      out[t * N + r] = finish_units(lanes, mins[t][r][0], mins[t][r][1]) + (bias ? bias[r] : 0.0f);
    }
}

// Tokens of [0, T) against RB rows: TB at a time, then the rest one by one.
template <WeightType W, int RB, int TB>
WEFT_QINLINE void row_block(const uint8_t* rows, size_t row_bytes, const QuantizedInput& x, int T, int K, float* out, size_t N,
                            const float* bias) {
  int t = 0;
  for (; t + TB <= T; t += TB) tile<W, RB, TB>(rows, row_bytes, x, t, K, out + static_cast<size_t>(t) * N, N, bias);
  for (; t < T; ++t) tile<W, RB, 1>(rows, row_bytes, x, t, K, out + static_cast<size_t>(t) * N, N, bias);
}

// Rows [n0, n1) for all T tokens. Weight-stationary: each weight row is read
// from memory once and used for every token of the step (from L1), 4 tokens
// at a time (the row's unpacking shared by four). Measured and rejected (see
// docs/performance.md): 2 rows x 2 tokens (1.2-1.5x slower from 4 tokens up);
// 2 rows x 1 token, faster for Q4_K while the weights sat in cache but 2.5x
// slower when they stream from memory, as in a real decode step.
template <WeightType W>
WEFT_QINLINE void quant_rows(float* out, const QuantizedInput& x, const uint8_t* w, const float* bias, int T, int N, int K,
                             size_t n0, size_t n1) {
  const size_t row_bytes = quant_row_bytes(W, K);
  for (size_t n = n0; n < n1; ++n) row_block<W, 1, 4>(w + n * row_bytes, row_bytes, x, T, K, out + n, N, bias ? bias + n : nullptr);
}

WEFT_QINLINE void quant_rows_any(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const float* bias,
                                 int T, int N, int K, size_t n0, size_t n1) {
  switch (type) {
    case WeightType::Q8_0: quant_rows<WeightType::Q8_0>(out, x, w, bias, T, N, K, n0, n1); break;
    case WeightType::Q4_0: quant_rows<WeightType::Q4_0>(out, x, w, bias, T, N, K, n0, n1); break;
    case WeightType::Q4_K: quant_rows<WeightType::Q4_K>(out, x, w, bias, T, N, K, n0, n1); break;
    case WeightType::Q6_K: quant_rows<WeightType::Q6_K>(out, x, w, bias, T, N, K, n0, n1); break;
    default: break;
  }
}

}  // namespace
}  // namespace weft
