// The matmul kernels, shared by float_matmul.cc (baseline), matmul_avx2.cc
// (built for AVX2/FMA/F16C) and matmul_avx512.cc (which adds its own tiles). Everything here has internal
// linkage, so each translation unit keeps its own copy, compiled for its own
// instruction set (no std:: templates either: an AVX2 copy of one could be
// picked by the linker for code that runs on older CPUs).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/half.h"
#include "kernels/float/sextets.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// Helpers of the kernels are inlined into each kernel, so they run with its instruction set.
#if defined(__GNUC__)
#define WEFT_INLINE inline __attribute__((always_inline))
#else
#define WEFT_INLINE inline
#endif

namespace weft {
namespace {


// Eight float lanes: a GCC/Clang vector (one AVX register, two SSE/NEON ones),
// or a plain struct elsewhere. Lane j accumulates the products at k = j mod 8.
#if defined(__GNUC__)
typedef float lanes8 __attribute__((vector_size(32)));
#else
struct lanes8 {
  float v[8];
  float operator[](int i) const { return v[i]; }
  lanes8 operator*(const lanes8& o) const { lanes8 r; for (int i = 0; i < 8; ++i) r.v[i] = v[i] * o.v[i]; return r; }
  lanes8& operator+=(const lanes8& o) { for (int i = 0; i < 8; ++i) v[i] += o.v[i]; return *this; }
};
#endif

WEFT_INLINE lanes8 load8(const float* p) {
  lanes8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Weight element types. load() widens eight weights to float lanes exactly;
// one() widens a single weight (for the tail columns).
// `direct`: the decode tiles widen in registers; otherwise they widen a row
// block into memory first (cheaper when widening needs many registers).
struct F32Weights {
  using Element = float;
  static constexpr bool direct = true;
  static WEFT_INLINE lanes8 load(const float* p) { return load8(p); }
  static WEFT_INLINE float one(const float* p) { return *p; }
};

#if defined(__GNUC__)
typedef uint16_t u16x8 __attribute__((vector_size(16)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));

WEFT_INLINE u32x8 load_u16x8(const uint16_t* p) {
  u16x8 h;
  std::memcpy(&h, p, sizeof h);
  return __builtin_convertvector(h, u32x8);
}
WEFT_INLINE lanes8 as_lanes(u32x8 bits) {
  lanes8 f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

struct BF16Weights {
  using Element = uint16_t;
  static constexpr bool direct = true;
  static WEFT_INLINE lanes8 load(const uint16_t* p) { return as_lanes(load_u16x8(p) << 16); }
  static WEFT_INLINE float one(const uint16_t* p) { return bf16_to_f32(*p); }
};

// The same steps as f16_to_f32 (half.h), eight at a time: portable, but ~10
// instructions per eight weights.
struct F16Weights {
  using Element = uint16_t;
  static constexpr bool direct = false;
  static WEFT_INLINE lanes8 load(const uint16_t* p) {
    const u32x8 h = load_u16x8(p);
    const lanes8 scaled = as_lanes((h & 0x7fffu) << 13) * 0x1p112f;
    u32x8 bits;
    std::memcpy(&bits, &scaled, sizeof bits);
    bits |= reinterpret_cast<u32x8>((h & 0x7c00u) == 0x7c00u) & 0x7f800000u;
    return as_lanes(bits | ((h & 0x8000u) << 16));
  }
  static WEFT_INLINE float one(const uint16_t* p) { return f16_to_f32(*p); }
};

#if defined(__F16C__) && defined(__AVX2__)
// F16C: one instruction per eight weights. Only in matmul_avx2.cc, which is
// built for AVX2/FMA/F16C and called only on CPUs that have them.
struct F16CWeights {
  using Element = uint16_t;
  static constexpr bool direct = true;
  static WEFT_INLINE lanes8 load(const uint16_t* p) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    lanes8 f;
    std::memcpy(&f, &v, sizeof f);
    return f;
  }
  static WEFT_INLINE float one(const uint16_t* p) { return f16_to_f32(*p); }
};
#elif defined(__aarch64__)
// ARM converts halves natively (fcvtl).
struct F16CWeights {
  using Element = uint16_t;
  static constexpr bool direct = true;
  static WEFT_INLINE lanes8 load(const uint16_t* p) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    const float32x4_t halves[2] = {vcvt_f32_f16(vget_low_f16(h)), vcvt_f32_f16(vget_high_f16(h))};
    lanes8 f;
    std::memcpy(&f, halves, sizeof f);
    return f;
  }
  static WEFT_INLINE float one(const uint16_t* p) { return f16_to_f32(*p); }
};
#define WEFT_HAVE_F16C_WEIGHTS 1
#endif
#else
struct BF16Weights {
  using Element = uint16_t;
  static constexpr bool direct = false;
  static lanes8 load(const uint16_t* p) { lanes8 v; for (int i = 0; i < 8; ++i) v.v[i] = bf16_to_f32(p[i]); return v; }
  static float one(const uint16_t* p) { return bf16_to_f32(*p); }
};
struct F16Weights {
  using Element = uint16_t;
  static constexpr bool direct = false;
  static lanes8 load(const uint16_t* p) { lanes8 v; for (int i = 0; i < 8; ++i) v.v[i] = f16_to_f32(p[i]); return v; }
  static float one(const uint16_t* p) { return f16_to_f32(*p); }
};
#endif

// Every output of the matmul is summed in this one order, whichever kernel
// computes it: lane j sums x[k] * w[k] for k = j, j + 8, ... below K rounded
// down to 8; the lanes are added pairwise; the tail k is added last, in order.
// That is what keeps logits bit-identical across batch shapes. (Widening a
// 16-bit weight is exact, so a 16-bit matrix gives exactly the results of its
// float32 copy.)
//
// Where the target has FMA (the AVX2 and AVX-512 builds, arm64), every
// multiply-add is fused, explicitly: left to -ffp-contract, GCC fused some
// tail loops and not others, so results depended on which tile ran a row.
// The baseline build on x86-64 has no FMA and rounds each product.
#if defined(__FMA__) || defined(__aarch64__)
#define WEFT_FUSED_MADD 1
#endif
WEFT_INLINE float madd(float x, float w, float sum) {
#if defined(WEFT_FUSED_MADD)
  return __builtin_fmaf(x, w, sum);
#else
  return sum + x * w;
#endif
}
WEFT_INLINE lanes8 madd(const lanes8& x, const lanes8& w, const lanes8& acc) {
#if defined(WEFT_FUSED_MADD) && defined(__x86_64__)
  return _mm256_fmadd_ps(x, w, acc);
#else
  lanes8 sum = acc;  // arm64: contracted to fmla (GCC and Clang contract vector code there by default)
  sum += x * w;
  return sum;
#endif
}

template <class W>
WEFT_INLINE float finish(const lanes8& acc, const float* x, const typename W::Element* w, int k8, int K) {
  float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (int k = k8; k < K; ++k) sum = madd(x[k], W::one(w + k), sum);
  return sum;
}

// A TB x RB tile: tokens x[0..TB) against weight rows w[0..RB), K columns each.
// out[t * out_stride + r] = dot(x_t, w_r) + bias[r]. The RB * TB accumulators
// stay in registers, so each loaded weight vector is used TB times.
template <class W, int TB, int RB>
WEFT_INLINE void tile(const float* x, const typename W::Element* w, int K, float* out, size_t out_stride, const float* bias) {
  lanes8 acc[TB][RB];
  for (int t = 0; t < TB; ++t)
    for (int r = 0; r < RB; ++r) acc[t][r] = lanes8{};
  const int k8 = K & ~7;
  for (int k = 0; k < k8; k += 8) {
    lanes8 wv[RB];
    for (int r = 0; r < RB; ++r) wv[r] = W::load(w + static_cast<size_t>(r) * K + k);
    for (int t = 0; t < TB; ++t) {
      const lanes8 xv = load8(x + static_cast<size_t>(t) * K + k);
      for (int r = 0; r < RB; ++r) acc[t][r] = madd(xv, wv[r], acc[t][r]);
    }
  }
  for (int t = 0; t < TB; ++t)
    for (int r = 0; r < RB; ++r)
      out[t * out_stride + r] = finish<W>(acc[t][r], x + static_cast<size_t>(t) * K, w + static_cast<size_t>(r) * K, k8, K) +
                                (bias ? bias[r] : 0.0f);
}

// n weights as float32: the weights themselves (F32) or widened into `to`.
template <class W>
WEFT_INLINE const float* widen(const typename W::Element* from, int n, float* to) {
  if constexpr (std::is_same<W, F32Weights>::value) {
    return from;
  } else {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      const lanes8 v = W::load(from + i);
      std::memcpy(to + i, &v, sizeof v);
    }
    for (; i < n; ++i) to[i] = W::one(from + i);
    return to;
  }
}

// out[t][n] = dot(in[t], w[n]) + bias[n] for weight rows n in [n0, n1) and all
// T tokens. Tokens go in tiles of 16 so their inputs stay in cache while this
// thread's weight rows stream past. Inside: with 4+ tokens, 4 tokens x 3 rows
// at a time (12 accumulators + 3 weight vectors + 1 input = 16 AVX registers);
// with fewer (decode), 1 token x 8 rows, which keeps more memory reads in flight.
// 16-bit weights are widened a row block at a time into `wide` (8 * K floats)
// and then go through the float32 tiles: widening is exact, so the result is
// the same; its cost is shared by up to 16 tokens, and the tiles keep all their
// registers for accumulators.
template <class W>
WEFT_INLINE void rows(float* out, const float* in, const typename W::Element* w, const float* bias, int T, int N, int K,
                      size_t n0, size_t n1, float* wide) {
  auto at = [&](int t, size_t n) { return out + static_cast<size_t>(t) * N + n; };
  auto input = [&](int t) { return in + static_cast<size_t>(t) * K; };
  for (int t0 = 0; t0 < T; t0 += 16) {
    const int t1 = t0 + 16 < T ? t0 + 16 : T;
    size_t n = n0;
    if (t1 - t0 >= 4) {
      for (; n + 3 <= n1; n += 3) {
        const float* b = bias ? bias + n : nullptr;
        const float* block = widen<W>(w + n * K, 3 * K, wide);
        int t = t0;
        for (; t + 4 <= t1; t += 4) tile<F32Weights, 4, 3>(input(t), block, K, at(t, n), N, b);
        for (; t < t1; ++t) tile<F32Weights, 1, 3>(input(t), block, K, at(t, n), N, b);
      }
    } else {
      for (; n + 8 <= n1; n += 8) {
        if constexpr (W::direct) {
          for (int t = t0; t < t1; ++t) tile<W, 1, 8>(input(t), w + n * K, K, at(t, n), N, bias ? bias + n : nullptr);
        } else {
          const float* block = widen<W>(w + n * K, 8 * K, wide);
          for (int t = t0; t < t1; ++t) tile<F32Weights, 1, 8>(input(t), block, K, at(t, n), N, bias ? bias + n : nullptr);
        }
      }
    }
    for (; n < n1; ++n)
      for (int t = t0; t < t1; ++t) tile<W, 1, 1>(input(t), w + n * K, K, at(t, n), N, bias ? bias + n : nullptr);
  }
}

// The 1 x 6 tile asks for the lines 4 KB ahead in its one stream: on an
// Intel Ice Lake Xeon, whose prefetchers follow 8 row-major streams better
// than one, one-token LM-head steps (151,936 x 1024, one thread) took 0.92x
// the row-major time without it and 1.06-1.10x with it (2-16 KB alike).
constexpr int kSextetPrefetch = 4096;

// One token against the 6 rows of a sextet (sextets.h): a 1 x 6 tile, every
// weight vector at a fixed offset from one pointer, so the rows arrive as one
// memory stream. K % 8 == 0 (no tail columns).
template <class W>
WEFT_INLINE void sextet_tile(const float* x, const typename W::Element* sextet, int K, float* out, const float* bias) {
  constexpr int R = kSextetRows;
  lanes8 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = lanes8{};
  for (int k = 0; k < K; k += 8) {
    const lanes8 xv = load8(x + k);
    const typename W::Element* chunk = sextet + static_cast<size_t>(k) * R;
    __builtin_prefetch(reinterpret_cast<const char*>(chunk) + kSextetPrefetch);
    __builtin_prefetch(reinterpret_cast<const char*>(chunk) + kSextetPrefetch + 64);
    for (int r = 0; r < R; ++r) acc[r] = madd(xv, W::load(chunk + r * 8), acc[r]);
  }
  for (int r = 0; r < R; ++r) out[r] = finish<W>(acc[r], x, sextet, K, K) + (bias ? bias[r] : 0.0f);
}

// A sextet's 6 rows widened to float32, row-major, into `to` (6 * K floats).
template <class W>
WEFT_INLINE void widen_sextet(const typename W::Element* sextet, int K, float* to) {
  for (int k = 0; k < K; k += 8)
    for (int r = 0; r < kSextetRows; ++r) {
      const lanes8 v = W::load(sextet + static_cast<size_t>(k) * kSextetRows + r * 8);
      std::memcpy(to + static_cast<size_t>(r) * K + k, &v, sizeof v);
    }
}

// rows() for a 16-bit matrix kept in sextets (sextets.h; K % 8 == 0):
// fewer than 4 tokens take a sextet's rows straight from memory, more widen
// one sextet at a time into `wide` and run rows()'s float32 tiles over its
// rows 0-2 and 3-5. Rows past the last whole sextet are row-major and go
// through rows(). n0 is a multiple of 6.
template <class W>
WEFT_INLINE void sextet_rows(float* out, const float* in, const typename W::Element* w, const float* bias, int T, int N,
                             int K, size_t n0, size_t n1, float* wide) {
  const size_t whole_rows = static_cast<size_t>(N) - static_cast<size_t>(N) % kSextetRows;
  const size_t n6 = n1 < whole_rows ? n1 : whole_rows;
  auto at = [&](int t, size_t n) { return out + static_cast<size_t>(t) * N + n; };
  auto input = [&](int t) { return in + static_cast<size_t>(t) * K; };
  for (int t0 = 0; t0 < T; t0 += 16) {
    const int t1 = t0 + 16 < T ? t0 + 16 : T;
    for (size_t n = n0; n < n6; n += kSextetRows) {
      const typename W::Element* sextet = w + n * K;
      const float* b = bias ? bias + n : nullptr;
      if (t1 - t0 < 4) {
        for (int t = t0; t < t1; ++t) sextet_tile<W>(input(t), sextet, K, at(t, n), b);
        continue;
      }
      widen_sextet<W>(sextet, K, wide);
      const float* rows3 = wide + 3 * static_cast<size_t>(K);
      const float* b3 = b ? b + 3 : nullptr;
      int t = t0;
      for (; t + 4 <= t1; t += 4) {
        tile<F32Weights, 4, 3>(input(t), wide, K, at(t, n), N, b);
        tile<F32Weights, 4, 3>(input(t), rows3, K, at(t, n + 3), N, b3);
      }
      for (; t < t1; ++t) {
        tile<F32Weights, 1, 3>(input(t), wide, K, at(t, n), N, b);
        tile<F32Weights, 1, 3>(input(t), rows3, K, at(t, n + 3), N, b3);
      }
    }
  }
  if (n6 < n1) rows<W>(out, in, w, bias, T, N, K, n0 > n6 ? n0 : n6, n1, wide);
}

}  // namespace

// The signature of every row kernel: rows [n0, n1) of out = in @ w^T (+ bias).
// `wide` is per-thread room for 8 * K floats (16-bit weights only).
using RowKernel = void (*)(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                           size_t n1, float* wide);

// Defined in matmul_avx2.cc when the build has it (WEFT_AVX2_KERNELS).
void rows_f32_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
                   float* wide);
void rows_f16_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0, size_t n1,
                   float* wide);
void rows_bf16_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                    size_t n1, float* wide);

// The same for matrices kept in sextets (sextets.h).
void rows_f16_sextets_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                          size_t n1, float* wide);
void rows_bf16_sextets_avx2(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                           size_t n1, float* wide);

// Defined in matmul_avx512.cc when the build has it (WEFT_AVX512_FLOAT_KERNELS);
// bit-identical to the AVX2 ones, `wide` unused.
void rows_f32_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                     size_t n1, float* wide);
void rows_f16_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                     size_t n1, float* wide);
void rows_bf16_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                      size_t n1, float* wide);
void rows_f16_sextets_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                            size_t n1, float* wide);
void rows_bf16_sextets_avx512(float* out, const float* in, const void* w, const float* bias, int T, int N, int K, size_t n0,
                             size_t n1, float* wide);

}  // namespace weft
