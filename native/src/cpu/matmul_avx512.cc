// The float-weight matmul kernels built for AVX-512 F/BW/VL (with AVX2, FMA
// and F16C; CMake adds the flags to this file on x86-64 and defines
// WEFT_AVX512_FLOAT_KERNELS). matmul.cc calls them only in the avx512vnni
// kernel set, which cpu_features.cc grants only on CPUs with AVX-512 F/BW/VL.
//
// Same results as the AVX2 kernels, bit for bit: every output keeps the one
// summation order of matmul_kernels.h (lane j of 8 takes k = j mod 8, one
// fused multiply-add per k in k order, then finish()). A 512-bit register
// holds the 8 lanes of TWO weight rows (low half row a, high half row b), each
// multiplied by the same 8 inputs (broadcast to both halves), so its FMA does
// exactly what two AVX2 FMAs would. What AVX-512 adds here is 32 registers
// (tiles of 8 tokens x 6 rows stay in registers, every weight read once per
// 8 tokens) and half the instructions per weight.
//
// Weights are widened in registers: F16 with vcvtph2ps (F16C, 16 at a time),
// BF16 by a zero-extend and a shift (exact). vdpbf16ps (AVX512-BF16) would
// round the activations to bf16, so it is not used: results would differ
// from the float32 copy of the same weights, which the tests require.
#if defined(WEFT_AVX512_FLOAT_KERNELS)
// GCC 12 warns about the deliberately undefined upper halves inside its own
// cast/broadcast intrinsics (avx512fintrin.h); nothing here reads them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "matmul_kernels.h"

namespace weft {
namespace {

// Rows a and b, 8 weights each from column k, widened: low half a, high half b.
struct F32Pair {
  using Element = float;
  static WEFT_INLINE __m512 load(const float* a, const float* b) {
    const __m512d lo = _mm512_castpd256_pd512(_mm256_castps_pd(_mm256_loadu_ps(a)));
    return _mm512_castpd_ps(_mm512_insertf64x4(lo, _mm256_castps_pd(_mm256_loadu_ps(b)), 1));
  }
};
WEFT_INLINE __m256i load_halves(const uint16_t* a, const uint16_t* b) {
  const __m256i lo = _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
  return _mm256_inserti128_si256(lo, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), 1);
}
// widen(): 16 elements (row a's 8, then row b's) to floats.
struct F16Pair {
  using Element = uint16_t;
  static WEFT_INLINE __m512 widen(__m256i bits) { return _mm512_cvtph_ps(bits); }
  static WEFT_INLINE __m512 load(const uint16_t* a, const uint16_t* b) { return widen(load_halves(a, b)); }
};
struct BF16Pair {
  using Element = uint16_t;
  static WEFT_INLINE __m512 widen(__m256i bits) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)); }
  static WEFT_INLINE __m512 load(const uint16_t* a, const uint16_t* b) { return widen(load_halves(a, b)); }
};
// The scalar widening of finish()'s tail columns, per element type.
template <class P>
struct Scalar;
template <>
struct Scalar<F32Pair> { using W = F32Weights; };
template <>
struct Scalar<F16Pair> { using W = F16CWeights; };
template <>
struct Scalar<BF16Pair> { using W = BF16Weights; };

// 8 inputs from x, in both halves.
WEFT_INLINE __m512 broadcast8(const float* x) {
  return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(x))));
}

// Per 256-bit half: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) in lane 0
// of the half, finish()'s pairwise order (a + b == b + a exactly, so the
// shuffled partner may come first).
WEFT_INLINE __m512 pairwise_halves(__m512 v) {
  v = _mm512_add_ps(v, _mm512_permute_ps(v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_add_ps(v, _mm512_permute_ps(v, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
}

// finish() for one output from its pairwise lane sum: the tail columns in
// order, then the bias (the AVX2 kernels' exact steps).
template <class W>
WEFT_INLINE float tail(float sum, const float* x, const typename W::Element* w, int k8, int K) {
  for (int k = k8; k < K; ++k) sum = madd(x[k], W::one(w + k), sum);
  return sum;
}

// A TB x (2 * PB) tile: tokens x[0..TB) against weight rows w[0..2 * PB),
// `valid` of them real (a missing row b of the last pair repeats row a and is
// not written). out[t * out_stride + r] = dot(x_t, w_r) + bias[r].
template <class P, int TB, int PB>
WEFT_INLINE void tile(const float* x, const typename P::Element* w, int K, int valid, float* out, size_t out_stride,
                      const float* bias) {
  using W = typename Scalar<P>::W;
  const typename P::Element* row[2 * PB];
  for (int r = 0; r < 2 * PB; ++r) row[r] = w + static_cast<size_t>(r < valid ? r : valid - 1) * K;
  __m512 acc[TB][PB];
  for (int t = 0; t < TB; ++t)
    for (int p = 0; p < PB; ++p) acc[t][p] = _mm512_setzero_ps();
  const int k8 = K & ~7;
  for (int k = 0; k < k8; k += 8) {
    __m512 wv[PB];
    for (int p = 0; p < PB; ++p) wv[p] = P::load(row[2 * p] + k, row[2 * p + 1] + k);
    for (int t = 0; t < TB; ++t) {
      const __m512 xv = broadcast8(x + static_cast<size_t>(t) * K + k);
      for (int p = 0; p < PB; ++p) acc[t][p] = _mm512_fmadd_ps(xv, wv[p], acc[t][p]);
    }
  }
  for (int t = 0; t < TB; ++t) {
    const float* xt = x + static_cast<size_t>(t) * K;
    for (int p = 0; p < PB; ++p) {
      const __m512 s = pairwise_halves(acc[t][p]);
      const float sums[2] = {_mm512_cvtss_f32(s), _mm_cvtss_f32(_mm512_extractf32x4_ps(s, 2))};
      for (int h = 0; h < 2 && 2 * p + h < valid; ++h) {
        const int r = 2 * p + h;
        out[t * out_stride + r] = tail<W>(sums[h], xt, row[r], k8, K) + (bias ? bias[r] : 0.0f);
      }
    }
  }
}

// Tokens [0, T) of x (T <= 8) against 2 * PB rows: a tile with TB = T.
template <class P, int PB>
WEFT_INLINE void tile_up_to_8(int T, const float* x, const typename P::Element* w, int K, int valid, float* out,
                              size_t out_stride, const float* bias) {
  switch (T) {
    case 1: return tile<P, 1, PB>(x, w, K, valid, out, out_stride, bias);
    case 2: return tile<P, 2, PB>(x, w, K, valid, out, out_stride, bias);
    case 3: return tile<P, 3, PB>(x, w, K, valid, out, out_stride, bias);
    case 4: return tile<P, 4, PB>(x, w, K, valid, out, out_stride, bias);
    case 5: return tile<P, 5, PB>(x, w, K, valid, out, out_stride, bias);
    case 6: return tile<P, 6, PB>(x, w, K, valid, out, out_stride, bias);
    case 7: return tile<P, 7, PB>(x, w, K, valid, out, out_stride, bias);
    default: return tile<P, 8, PB>(x, w, K, valid, out, out_stride, bias);
  }
}

// out[t][n] for weight rows n in [n0, n1) and all T tokens, weight-stationary:
// a block of 6 rows (3 pairs) is read from memory once and then stays in
// L1/L2 while every token of the step passes it, 8 tokens at a time in
// registers: 8 x 3 accumulators + 3 weight registers + 1 input = 28 of the 32
// registers; each weight vector widened once feeds 8 tokens.
// 1-3 tokens (decode) go through the AVX2 kernels' 1 token x 8 rows tile
// (matmul_kernels.h, compiled here): with weights streaming from memory it
// was 6-15% faster than 512-bit row pairs (bench/float-kernels), and it is
// the same arithmetic.
template <class P, class W>
WEFT_INLINE void rows512(float* out, const float* in, const typename P::Element* w, const float* bias, int T, int N, int K,
                      size_t n0, size_t n1) {
  if (T <= 3) return rows<W>(out, in, w, bias, T, N, K, n0, n1, nullptr);
  constexpr int block = 6;
  for (size_t n = n0; n < n1; n += block) {
    const int valid = static_cast<int>(n1 - n < static_cast<size_t>(block) ? n1 - n : block);
    const typename P::Element* wn = w + n * K;
    const float* b = bias ? bias + n : nullptr;
    for (int t = 0; t < T; t += 8) {
      const int tb = T - t < 8 ? T - t : 8;
      tile_up_to_8<P, 3>(tb, in + static_cast<size_t>(t) * K, wn, K, valid, out + static_cast<size_t>(t) * N + n, N, b);
    }
  }
}

// Sextets (sextets.h): rows 2q and 2q + 1 of a sextet, 8 columns each, are
// 16 consecutive elements: one load, widened straight into the pair's register
// (low half row 2q, high half row 2q + 1).
WEFT_INLINE __m256i load16(const uint16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// tile() for the 6 rows of a sextet, as 3 pairs: each pair's 8 columns of a
// chunk one load at a fixed offset from the sextet (chunk c is 48c elements
// in, pair q 16q further). K % 8 == 0, so no tail columns; the sums are
// finished as tile() finishes them.
template <class P, int TB>
WEFT_INLINE void sextet_tile(const float* x, const typename P::Element* sextet, int K, float* out, size_t out_stride,
                             const float* bias) {
  constexpr int PB = kSextetRows / 2;
  __m512 acc[TB][PB];
  for (int t = 0; t < TB; ++t)
    for (int p = 0; p < PB; ++p) acc[t][p] = _mm512_setzero_ps();
  for (int k = 0; k < K; k += 8) {
    const typename P::Element* chunk = sextet + static_cast<size_t>(k) * kSextetRows;
    __m512 wv[PB];
    for (int p = 0; p < PB; ++p) wv[p] = P::widen(load16(chunk + 16 * p));
    for (int t = 0; t < TB; ++t) {
      const __m512 xv = broadcast8(x + static_cast<size_t>(t) * K + k);
      for (int p = 0; p < PB; ++p) acc[t][p] = _mm512_fmadd_ps(xv, wv[p], acc[t][p]);
    }
  }
  for (int t = 0; t < TB; ++t)
    for (int p = 0; p < PB; ++p) {
      const __m512 s = pairwise_halves(acc[t][p]);
      const float sums[2] = {_mm512_cvtss_f32(s), _mm_cvtss_f32(_mm512_extractf32x4_ps(s, 2))};
      for (int h = 0; h < 2; ++h) {
        const int r = 2 * p + h;
        out[t * out_stride + r] = sums[h] + (bias ? bias[r] : 0.0f);
      }
    }
}

// rows512() for a 16-bit matrix kept in sextets: one sextet (6 rows) read
// from memory once and then from L1 while every token of the step passes
// it, 8 tokens at a time in registers. 1-3 tokens take the AVX2 kernels'
// sextet tile (one token x one sextet). Rows after the last whole sextet are
// row-major and go through rows512(). n0 is a multiple of 6.
template <class P, class W>
WEFT_INLINE void sextet_rows512(float* out, const float* in, const typename P::Element* w, const float* bias, int T, int N,
                                int K, size_t n0, size_t n1) {
  if (T <= 3) return sextet_rows<W>(out, in, w, bias, T, N, K, n0, n1, nullptr);
  const size_t whole_rows = static_cast<size_t>(N) - static_cast<size_t>(N) % kSextetRows;
  const size_t n6 = n1 < whole_rows ? n1 : whole_rows;
  for (size_t n = n0; n < n6; n += kSextetRows) {
    const typename P::Element* sextet = w + n * K;
    const float* b = bias ? bias + n : nullptr;
    for (int t = 0; t < T; t += 8) {
      const float* x = in + static_cast<size_t>(t) * K;
      float* o = out + static_cast<size_t>(t) * N + n;
      switch (T - t < 8 ? T - t : 8) {
        case 1: sextet_tile<P, 1>(x, sextet, K, o, N, b); break;
        case 2: sextet_tile<P, 2>(x, sextet, K, o, N, b); break;
        case 3: sextet_tile<P, 3>(x, sextet, K, o, N, b); break;
        case 4: sextet_tile<P, 4>(x, sextet, K, o, N, b); break;
        case 5: sextet_tile<P, 5>(x, sextet, K, o, N, b); break;
        case 6: sextet_tile<P, 6>(x, sextet, K, o, N, b); break;
        case 7: sextet_tile<P, 7>(x, sextet, K, o, N, b); break;
        default: sextet_tile<P, 8>(x, sextet, K, o, N, b); break;
      }
    }
  }
  if (n6 < n1) rows512<P, W>(out, in, w, bias, T, N, K, n0 > n6 ? n0 : n6, n1);
}

}  // namespace

void rows_f16_sextets_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                            size_t n1, float*) {
  sextet_rows512<F16Pair, F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1);
}
void rows_bf16_sextets_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                             size_t n1, float*) {
  sextet_rows512<BF16Pair, BF16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1);
}

void rows_f32_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                     size_t n1, float*) {
  rows512<F32Pair, F32Weights>(out, in, static_cast<const float*>(w), bias, T, N, K, n0, n1);
}
void rows_f16_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                     size_t n1, float*) {
  rows512<F16Pair, F16CWeights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1);
}
void rows_bf16_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                      size_t n1, float*) {
  rows512<BF16Pair, BF16Weights>(out, in, static_cast<const uint16_t*>(w), bias, T, N, K, n0, n1);
}

}  // namespace weft
#endif
