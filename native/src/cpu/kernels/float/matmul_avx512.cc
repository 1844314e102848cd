// The float-weight matmul kernels built for AVX-512 F/BW/VL (with AVX2, FMA
// and F16C; CMake adds the flags to this file on x86-64 and defines
// WEFT_AVX512_FLOAT_KERNELS). float_matmul.cc calls them only in the avx512vnni
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
#include "kernels/float/matmul_kernels.h"
#include "kernels/matmul_types.h"

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

// The weight-stationary block: 6 rows, as 3 pairs (rows 2p and 2p + 1 in the
// low and high halves of one register).
constexpr int kBlockRows = 6, kBlockPairs = kBlockRows / 2;

// A block against tokens x[0..TB), in registers: 8 x 3 accumulators + 3
// weight registers + 1 input = 28 of the 32 registers.
// out[t * out_stride + r] = dot(x_t, w_r) + bias[r] for the `valid` real rows
// (a missing row b of the last pair is a copy of row a and is not written).
// pair(p, k) gives rows 2p and 2p + 1 at columns k..k+7 as floats, from
// wherever the caller keeps them, and pair.ahead(k) may ask for lines of the
// next block meanwhile; row[] serves the K % 8 tail columns.
template <class W, int TB, class Pairs>
WEFT_INLINE void tile(const float* x, Pairs pair, const typename W::Element* const* row, int K, int valid, float* out,
                      size_t out_stride, const float* bias) {
  __m512 acc[TB][kBlockPairs];
  for (int t = 0; t < TB; ++t)
    for (int p = 0; p < kBlockPairs; ++p) acc[t][p] = _mm512_setzero_ps();
  const int k8 = K & ~7;
  for (int k = 0; k < k8; k += 8) {
    pair.ahead(k);
    __m512 wv[kBlockPairs];
    for (int p = 0; p < kBlockPairs; ++p) wv[p] = pair(p, k);
    for (int t = 0; t < TB; ++t) {
      const __m512 xv = broadcast8(x + static_cast<size_t>(t) * K + k);
      for (int p = 0; p < kBlockPairs; ++p) acc[t][p] = _mm512_fmadd_ps(xv, wv[p], acc[t][p]);
    }
  }
  for (int t = 0; t < TB; ++t) {
    const float* xt = x + static_cast<size_t>(t) * K;
    for (int p = 0; p < kBlockPairs; ++p) {
      const __m512 s = pairwise_halves(acc[t][p]);
      const float sums[2] = {_mm512_cvtss_f32(s), _mm_cvtss_f32(_mm512_extractf32x4_ps(s, 2))};
      for (int h = 0; h < 2 && 2 * p + h < valid; ++h) {
        const int r = 2 * p + h;
        out[t * out_stride + r] = tail<W>(sums[h], xt, row[r], k8, K) + (bias ? bias[r] : 0.0f);
      }
    }
  }
}

// A block against tokens x[0..T) (T <= 8): tile() with TB = T.
template <class W, class Pairs>
WEFT_INLINE void tile_up_to_8(int T, const float* x, Pairs pair, const typename W::Element* const* row, int K, int valid,
                              float* out, size_t out_stride, const float* bias) {
  switch (T) {
    case 1: return tile<W, 1>(x, pair, row, K, valid, out, out_stride, bias);
    case 2: return tile<W, 2>(x, pair, row, K, valid, out, out_stride, bias);
    case 3: return tile<W, 3>(x, pair, row, K, valid, out, out_stride, bias);
    case 4: return tile<W, 4>(x, pair, row, K, valid, out, out_stride, bias);
    case 5: return tile<W, 5>(x, pair, row, K, valid, out, out_stride, bias);
    case 6: return tile<W, 6>(x, pair, row, K, valid, out, out_stride, bias);
    case 7: return tile<W, 7>(x, pair, row, K, valid, out, out_stride, bias);
    default: return tile<W, 8>(x, pair, row, K, valid, out, out_stride, bias);
  }
}

// The rows of block n (row n + r at w + (n + r) * K), a missing one a copy of the last real one.
template <class E>
WEFT_INLINE void block_rows(const E* w, size_t n, int K, int valid, const E* (&row)[kBlockRows]) {
  for (int r = 0; r < kBlockRows; ++r) row[r] = w + (n + static_cast<size_t>(r < valid ? r : valid - 1)) * K;
}

// out[t][n] for weight rows n in [n0, n1) and all T tokens, weight-stationary:
// blocks of 6 rows (3 pairs) against tiles of 8 tokens, accumulators in
// registers; each weight vector widened once feeds 8 tokens. Up to
// kGuidedTokens (a decode step), every tile passes a block while it is in L1.
// Above (prefill), every block of the chunk passes a tile while the tile is
// in L1/L2: run_parts keeps such chunks to ~192 KB of weights, which stay in
// L2 for the later tiles, and each tile's inputs are read once per chunk. The
// other way round, a 512-token prefill streamed all its inputs (2-6 MB, more
// than L2) past every block: 1.18-1.31x slower on an Ice Lake Xeon.
// pairs_at(n, row, first_tile) gives block n's pairs as tile() takes them.
template <class W, class PairsAt>
WEFT_INLINE void blocks512(float* out, const float* in, const typename W::Element* w, const float* bias, int T, int N,
                           int K, size_t n0, size_t n1, PairsAt pairs_at) {
  using E = typename W::Element;
  auto block_tile = [&](size_t n, int t) {
    const int valid = static_cast<int>(n1 - n < static_cast<size_t>(kBlockRows) ? n1 - n : kBlockRows);
    const E* row[kBlockRows];
    block_rows(w, n, K, valid, row);
    const int tb = T - t < 8 ? T - t : 8;
    tile_up_to_8<W>(tb, in + static_cast<size_t>(t) * K, pairs_at(n, row, t == 0), row, K, valid,
                    out + static_cast<size_t>(t) * N + n, N, bias ? bias + n : nullptr);
  };
  if (T <= kGuidedTokens) {  // at most 2 tiles: each block (read from memory) serves them while in L1
    for (size_t n = n0; n < n1; n += kBlockRows)
      for (int t = 0; t < T; t += 8) block_tile(n, t);
  } else {
    for (int t = 0; t < T; t += 8)
      for (size_t n = n0; n < n1; n += kBlockRows) block_tile(n, t);
  }
}

// Row-major rows: pair p of a block from rows 2p and 2p + 1, widened as loaded.
template <class P>
struct RowPairs {
  const typename P::Element* const* row;
  WEFT_INLINE __m512 operator()(int p, int k) const { return P::load(row[2 * p] + k, row[2 * p + 1] + k); }
  WEFT_INLINE void ahead(int) const {}
};
template <class P, class W>
WEFT_INLINE void rows512(float* out, const float* in, const typename P::Element* w, const float* bias, int T, int N, int K,
                         size_t n0, size_t n1) {
  using E = typename P::Element;
  // One token (decode) goes through the AVX2 kernels' 1 token x 8 rows tile
  // (matmul_kernels.h, compiled here): with weights streaming from memory it
  // was 6-15% faster than 512-bit row pairs (bench/float-kernels), and it is
  // the same arithmetic. From 2 tokens (a verify step) one tile over all of
  // them reads and widens each weight once: the AVX2 tile, a token at a
  // time, made 3 tokens cost more than 4 (bench/few-rows).
  if (T == 1) return rows<W>(out, in, w, bias, T, N, K, n0, n1, nullptr);
  auto pairs_at = [](size_t, const E* const* row, bool) { return RowPairs<P>{row}; };
  blocks512<W>(out, in, w, bias, T, N, K, n0, n1, pairs_at);
}

// Sextets (sextets.h): rows 2q and 2q + 1 of a sextet, 8 columns each, are
// 16 consecutive elements: one load, widened straight into the pair's register
// (low half row 2q, high half row 2q + 1).
WEFT_INLINE __m256i load16(const uint16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// A sextet's pairs: pair q at columns k..k+7 is the 16 elements at 6k + 16q.
// ahead(k) asks for the lines of `next` (the sextet after, or null) at the
// same offset, so the one stream is a whole sextet (6K elements) ahead while
// this one is multiplied: without it an Intel Ice Lake Xeon's 16-stream F16
// steps waited for memory and computed in turn (the hardware prefetchers
// stop at every 4 KB page).
template <class P>
struct SextetPairs {
  const typename P::Element* sextet;
  const char* next;
  WEFT_INLINE __m512 operator()(int p, int k) const { return P::widen(load16(sextet + 6 * static_cast<size_t>(k) + 16 * p)); }
  WEFT_INLINE void ahead(int k) const {
    if (!next) return;
    const char* at = next + 12 * static_cast<size_t>(k);  // 6k 16-bit elements: 96 bytes per 8 columns
    _mm_prefetch(at, _MM_HINT_T0);
    _mm_prefetch(at + 64, _MM_HINT_T0);
  }
};

// rows512() for a 16-bit matrix kept in sextets: a sextet is one block (K % 8
// == 0, so no tail columns); the first token tile over each sextet asks for
// the next one's lines. One token takes the AVX2 kernels' sextet tile (one
// token x one sextet), as in rows512(). Rows after the last whole sextet are row-major and go
// through rows512(). n0 is a multiple of 6.
template <class P, class W>
WEFT_INLINE void sextet_rows512(float* out, const float* in, const typename P::Element* w, const float* bias, int T, int N,
                                int K, size_t n0, size_t n1) {
  static_assert(kSextetRows == kBlockRows, "a sextet is one block");
  if (T == 1) return sextet_rows<W>(out, in, w, bias, T, N, K, n0, n1, nullptr);
  using E = typename P::Element;
  const size_t whole_rows = static_cast<size_t>(N) - static_cast<size_t>(N) % kSextetRows;
  const size_t n6 = n1 < whole_rows ? n1 : whole_rows;
  auto pairs_at = [w, K, n6](size_t n, const E* const*, bool first_tile) {
    const E* sextet = w + n * K;
    const bool next = first_tile && n + kSextetRows < n6;
    return SextetPairs<P>{sextet, next ? reinterpret_cast<const char*>(sextet + kSextetRows * static_cast<size_t>(K)) : nullptr};
  };
  if (n0 < n6) blocks512<W>(out, in, w, bias, T, N, K, n0, n6, pairs_at);
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
