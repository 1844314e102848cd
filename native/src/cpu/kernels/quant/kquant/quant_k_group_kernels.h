// The Q4_K / Q6_K k-group kernels (layout: quant_repack.h, order: quant_k.h),
// included by quant_k_avx2.cc, quant_k_avxvnni.cc and quant_k_avx512vnni.cc
// after each defines the vector type it runs on:
//   WEFT_KG_512: 512-bit registers (AVX512-VNNI), 16 rows per register,
//                8-token tiles (32 registers)
//   otherwise 256-bit (AVX2, AVX-VNNI): a group is two halves of 8 rows,
//                4-token tiles; WEFT_KG_VNNI selects vpdpbusd / vpdpwssd
//                over vpmaddubsw + vpmaddwd (+ vpaddd)
//
// Per output every set computes the integers of quant_k.h exactly (any order
// of integer additions gives the same int32) and the float steps in the
// baseline's order (quant_k.cc), with FMA contraction off: bit-identical.
// The weights' 4-byte lanes are unsigned (Q4_K's nibble, Q6_K's u = q + 32)
// against signed int8 activations, so vpdpbusd is exact, and so is the
// vpmaddubsw pair (at most 2 x 63 x 127 = 16002; two of them summed in int16
// at most 32004). Q6_K's -32 offset: each sub-block's sum starts at -32 *
// sum(x) (KQuantInput::offset16), so p is the dot product of q itself.
//
// AVX2 (no VNNI) sums in int16 instead (WEFT_KG_INT16_SUMS): its one vector
// multiplier port runs vpmaddubsw and vpmaddwd alike (Zen 3, measured), so
// each sub-block's products are added in int16 and one vpmaddwd against the
// sub-block's scales (each row's scale in both int16 halves of its lane)
// gives sc * p in int32, replacing the per-slice vpmaddwd and the vpmulld.
// Bounds: Q4_K pairs <= 2 x 15 x 127, eight of them <= 30480; Q6_K takes
// u = q + 32 (<= 63): pairs <= 2 x 63 x 127, two of them <= 32004, and the
// offset -32 * sc * sum16(x) once per block. Same integers, so the same bits.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "kernels/quant/kquant/kquant_formats.h"
#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"

#define WEFT_KG_INLINE inline __attribute__((always_inline))

namespace weft {
namespace {

#if defined(WEFT_KG_512)
struct Vec {
  using I = __m512i;
  using F = __m512;
  static constexpr int kRows = 16;   // rows per register
  static constexpr int kTokens = 8;  // tokens per tile
  static WEFT_KG_INLINE I load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static WEFT_KG_INLINE I bcast32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  }
  static WEFT_KG_INLINE I bytes(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static WEFT_KG_INLINE I zero() { return _mm512_setzero_si512(); }
  static WEFT_KG_INLINE I and_(I a, I b) { return _mm512_and_si512(a, b); }
  static WEFT_KG_INLINE I srli16(I a, int n) { return _mm512_srli_epi16(a, n); }
  // (a & m) | b, for b without bits in m.
  static WEFT_KG_INLINE I merge(I a, I m, I b) { return _mm512_ternarylogic_epi32(a, m, b, 0xEA); }
  static WEFT_KG_INLINE I add(I a, I b) { return _mm512_add_epi32(a, b); }
  static WEFT_KG_INLINE I mullo(I a, I b) { return _mm512_mullo_epi32(a, b); }
  // acc + the 4-products sums of u8 w x s8 x, for two slices.
  static WEFT_KG_INLINE I dot2(I acc, I w0, I x0, I w1, I x1) {
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc, w0, x0), w1, x1);
  }
  // acc + pairs of int16 products.
  static WEFT_KG_INLINE I madd16(I acc, I a, I b) { return _mm512_dpwssd_epi32(acc, a, b); }
  // 16 rows' bytes widened: unsigned / signed to int32, unsigned pairs to int16.
  static WEFT_KG_INLINE I u8_i32(const uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static WEFT_KG_INLINE I s8_i32(const uint8_t* p) { return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static WEFT_KG_INLINE I u8_i16(const uint8_t* p) { return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static WEFT_KG_INLINE F halves(const uint8_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static WEFT_KG_INLINE F fzero() { return _mm512_setzero_ps(); }
  static WEFT_KG_INLINE F set1(float v) { return _mm512_set1_ps(v); }
  static WEFT_KG_INLINE F cvt(I a) { return _mm512_cvtepi32_ps(a); }
  static WEFT_KG_INLINE F fadd(F a, F b) { return _mm512_add_ps(a, b); }
  static WEFT_KG_INLINE F fsub(F a, F b) { return _mm512_sub_ps(a, b); }
  static WEFT_KG_INLINE F fmul(F a, F b) { return _mm512_mul_ps(a, b); }
  static WEFT_KG_INLINE F fload(const float* p, int n) {
    return n == kRows ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
  }
  static WEFT_KG_INLINE void fstore(float* p, F v, int n) {
    if (n == kRows) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
  }
};
#else
struct Vec {
  using I = __m256i;
  using F = __m256;
  static constexpr int kRows = 8;
  static constexpr int kTokens = 4;
  static WEFT_KG_INLINE I load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static WEFT_KG_INLINE I bcast32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
  }
  static WEFT_KG_INLINE I bytes(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static WEFT_KG_INLINE I zero() { return _mm256_setzero_si256(); }
  static WEFT_KG_INLINE I and_(I a, I b) { return _mm256_and_si256(a, b); }
  static WEFT_KG_INLINE I srli16(I a, int n) { return _mm256_srli_epi16(a, n); }
  static WEFT_KG_INLINE I merge(I a, I m, I b) { return _mm256_or_si256(_mm256_and_si256(a, m), b); }
  static WEFT_KG_INLINE I add(I a, I b) { return _mm256_add_epi32(a, b); }
  static WEFT_KG_INLINE I mullo(I a, I b) { return _mm256_mullo_epi32(a, b); }
#if defined(WEFT_KG_VNNI)
  static WEFT_KG_INLINE I dot2(I acc, I w0, I x0, I w1, I x1) { return WEFT_KG_DPBUSD(WEFT_KG_DPBUSD(acc, w0, x0), w1, x1); }
  static WEFT_KG_INLINE I madd16(I acc, I a, I b) { return WEFT_KG_DPWSSD(acc, a, b); }
#else
  static WEFT_KG_INLINE I dot2(I acc, I w0, I x0, I w1, I x1) {
    const I pairs = _mm256_add_epi16(_mm256_maddubs_epi16(w0, x0), _mm256_maddubs_epi16(w1, x1));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  static WEFT_KG_INLINE I madd16(I acc, I a, I b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
#endif
  static WEFT_KG_INLINE I u8_i32(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
  static WEFT_KG_INLINE I s8_i32(const uint8_t* p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
  static WEFT_KG_INLINE I u8_i16(const uint8_t* p) { return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static WEFT_KG_INLINE F halves(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static WEFT_KG_INLINE F fzero() { return _mm256_setzero_ps(); }
  static WEFT_KG_INLINE F set1(float v) { return _mm256_set1_ps(v); }
  static WEFT_KG_INLINE F cvt(I a) { return _mm256_cvtepi32_ps(a); }
  static WEFT_KG_INLINE F fadd(F a, F b) { return _mm256_add_ps(a, b); }
  static WEFT_KG_INLINE F fsub(F a, F b) { return _mm256_sub_ps(a, b); }
  static WEFT_KG_INLINE F fmul(F a, F b) { return _mm256_mul_ps(a, b); }
  static WEFT_KG_INLINE F fload(const float* p, int n) {
    if (n == kRows) return _mm256_loadu_ps(p);
    float part[kRows] = {};
    std::memcpy(part, p, sizeof(float) * n);
    return _mm256_loadu_ps(part);
  }
  static WEFT_KG_INLINE void fstore(float* p, F v, int n) {
    if (n == kRows) return _mm256_storeu_ps(p, v);
    float part[kRows];
    _mm256_storeu_ps(part, v);
    std::memcpy(p, part, sizeof(float) * n);
  }
};
#endif

using I = Vec::I;
using F = Vec::F;

#if !defined(WEFT_KG_512) && !defined(WEFT_KG_VNNI)
#define WEFT_KG_INT16_SUMS 1
// Eight rows' byte scales (rows r .. r + 7 of one sub-block) as int16 pairs,
// each row's scale twice: vpmaddwd against int16 sums then gives sc * p.
template <bool Signed>
WEFT_KG_INLINE I scale_pairs(const uint8_t* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i twice = _mm_unpacklo_epi8(v, v);
  return Signed ? _mm256_cvtepi8_epi16(twice) : _mm256_cvtepu8_epi16(twice);
}
#endif

// The end of a tile: the accumulators parked in `partial` ([T][16]) until the
// next pass over the row, or + bias as outputs.
template <int TB>
WEFT_KG_INLINE void finish_tile(const F* acc, bool more, int t0, int r0, int rows, float* partial, float* out, size_t N,
                                const float* bias) {
  if (more) {
    for (int t = 0; t < TB; ++t) Vec::fstore(partial + (t0 + t) * kKGroupRows + r0, acc[t], Vec::kRows);
    return;
  }
  const F bv = bias ? Vec::fload(bias, rows) : Vec::fzero();
  for (int t = 0; t < TB; ++t) Vec::fstore(out + static_cast<size_t>(t0 + t) * N, Vec::fadd(acc[t], bv), rows);
}

// The k-group rows r0 .. r0 + kRows - 1 (`rows` of them real) of group g
// against tokens t0 .. t0 + TB - 1, super-blocks [b0, b1) of the row. The
// first token tile prefetches the next super-block's lines while it works on
// one: at one token the stream from memory ran at half the bandwidth without
// it (measured on Zen 4). The prefetches are spread over the sub-blocks, a
// few lines per step: issued all at once they filled the miss buffers and
// stalled the core (one-stream Q4_K_M decode 1.3x faster spread, on Zen 3
// with AVX2). Later tiles, and the second half of a 256-bit group, find the
// lines in cache.
template <int BlockBytes, int Steps>
WEFT_KG_INLINE void prefetch_next_block(const uint8_t* block, int step) {
  constexpr int kPerStep = (BlockBytes + 64 * Steps - 1) / (64 * Steps) * 64;
  for (int l = step * kPerStep; l < (step + 1) * kPerStep && l < BlockBytes; l += 64)
    _mm_prefetch(reinterpret_cast<const char*>(block + BlockBytes + l), _MM_HINT_T0);
}
template <int TB>
WEFT_KG_INLINE void q4k_group_tile(const uint8_t* g, int blocks, int b0, int b1, const KQuantInput& x, int t0, int r0,
                                   int rows, float* partial, float* out, size_t N, const float* bias) {
  const I low4 = Vec::bytes(0x0f);
  F acc[TB];
  for (int t = 0; t < TB; ++t) acc[t] = b0 == 0 ? Vec::fzero() : Vec::fload(partial + (t0 + t) * kKGroupRows + r0, Vec::kRows);
  for (int blk = b0; blk < b1; ++blk) {
    const uint8_t* b = g + static_cast<size_t>(blk) * 2368;
    const bool prefetch = t0 == 0 && r0 == 0;
    const int8_t* xq[TB];
    I isum[TB], msum[TB];
    for (int t = 0; t < TB; ++t) {
      const size_t at = static_cast<size_t>(t0 + t) * blocks + blk;
      xq[t] = x.q + at * kSuperBlock;
      isum[t] = Vec::zero();
      msum[t] = Vec::zero();
    }
    for (int k = 0; k < 4; ++k) {  // the mins: m[2k], m[2k+1] x xsum32[2k], xsum32[2k+1]
      const I m = Vec::u8_i16(b + 192 + 32 * k + 2 * r0);
      for (int t = 0; t < TB; ++t)
        msum[t] = Vec::madd16(msum[t], m, Vec::bcast32(x.sum32 + (static_cast<size_t>(t0 + t) * blocks + blk) * 8 + 2 * k));
    }
    for (int j = 0; j < 8; ++j) {
      if (prefetch) prefetch_next_block<2368, 8>(b, j);
      const uint8_t* q = b + 320 + 512 * (j / 2) + 4 * r0;
#if defined(WEFT_KG_INT16_SUMS)
      I s16[TB];
      for (int t = 0; t < TB; ++t) s16[t] = Vec::zero();
      for (int s = 0; s < 8; s += 2) {
        I u0 = Vec::load(q + 64 * s), u1 = Vec::load(q + 64 * s + 64);
        if (j % 2) u0 = Vec::srli16(u0, 4), u1 = Vec::srli16(u1, 4);
        u0 = Vec::and_(u0, low4), u1 = Vec::and_(u1, low4);
        for (int t = 0; t < TB; ++t) {
          const I two = _mm256_add_epi16(_mm256_maddubs_epi16(u0, Vec::bcast32(xq[t] + 32 * j + 4 * s)),
                                         _mm256_maddubs_epi16(u1, Vec::bcast32(xq[t] + 32 * j + 4 * s + 4)));
          s16[t] = _mm256_add_epi16(s16[t], two);
        }
      }
      const I sc = scale_pairs<false>(b + 64 + 16 * j + r0);
      for (int t = 0; t < TB; ++t) isum[t] = Vec::madd16(isum[t], s16[t], sc);
#else
      I p[TB];
      for (int t = 0; t < TB; ++t) p[t] = Vec::zero();
      for (int s = 0; s < 8; s += 2) {
        I u0 = Vec::load(q + 64 * s), u1 = Vec::load(q + 64 * s + 64);
        if (j % 2) u0 = Vec::srli16(u0, 4), u1 = Vec::srli16(u1, 4);
        u0 = Vec::and_(u0, low4), u1 = Vec::and_(u1, low4);
        for (int t = 0; t < TB; ++t)
          p[t] = Vec::dot2(p[t], u0, Vec::bcast32(xq[t] + 32 * j + 4 * s), u1, Vec::bcast32(xq[t] + 32 * j + 4 * s + 4));
      }
      const I sc = Vec::u8_i32(b + 64 + 16 * j + r0);
      for (int t = 0; t < TB; ++t) isum[t] = Vec::add(isum[t], Vec::mullo(p[t], sc));
#endif
    }
    const F d = Vec::halves(b + 2 * r0), dmin = Vec::halves(b + 32 + 2 * r0);
    for (int t = 0; t < TB; ++t) {
      const F xd = Vec::set1(x.d[static_cast<size_t>(t0 + t) * blocks + blk]);
      const F fd = Vec::fmul(d, xd), fm = Vec::fmul(dmin, xd);
      acc[t] = Vec::fadd(acc[t], Vec::fsub(Vec::fmul(fd, Vec::cvt(isum[t])), Vec::fmul(fm, Vec::cvt(msum[t]))));
    }
  }
  finish_tile<TB>(acc, b1 < blocks, t0, r0, rows, partial, out, N, bias);
}

template <int TB>
WEFT_KG_INLINE void q6k_group_tile(const uint8_t* g, int blocks, int b0, int b1, const KQuantInput& x, int t0, int r0,
                                   int rows, float* partial, float* out, size_t N, const float* bias) {
  const I low6 = Vec::bytes(0x3f), bits01 = Vec::bytes(0x03), bits23 = Vec::bytes(0x0c), bits45 = Vec::bytes(0x30);
  F acc[TB];
  for (int t = 0; t < TB; ++t) acc[t] = b0 == 0 ? Vec::fzero() : Vec::fload(partial + (t0 + t) * kKGroupRows + r0, Vec::kRows);
  for (int blk = b0; blk < b1; ++blk) {
    const uint8_t* b = g + static_cast<size_t>(blk) * 3360;
    const bool prefetch = t0 == 0 && r0 == 0;
    const int8_t* xq[TB];
    I isum[TB];
#if !defined(WEFT_KG_INT16_SUMS)
    const int32_t* off[TB];
    for (int t = 0; t < TB; ++t) off[t] = x.offset16 + (static_cast<size_t>(t0 + t) * blocks + blk) * 16;
#endif
    for (int t = 0; t < TB; ++t) {
      xq[t] = x.q + (static_cast<size_t>(t0 + t) * blocks + blk) * kSuperBlock;
      isum[t] = Vec::zero();
    }
    for (int j = 0; j < 16; ++j) {
      if (prefetch) prefetch_next_block<3360, 16>(b, j);
      const uint8_t* v = b + 288 + 192 * j + 4 * r0;
      const I v0 = Vec::load(v), v1 = Vec::load(v + 64), v2 = Vec::load(v + 128);
      const I u0 = Vec::and_(v0, low6), u1 = Vec::and_(v1, low6), u2 = Vec::and_(v2, low6);
      // slice 3: its bits 0-1, 2-3, 4-5 are the top bits of vectors 0, 1, 2
      const I u3 = Vec::merge(Vec::srli16(v0, 6), bits01,
                              Vec::merge(Vec::srli16(v1, 4), bits23, Vec::and_(Vec::srli16(v2, 2), bits45)));
#if defined(WEFT_KG_INT16_SUMS)
      const I sc = scale_pairs<true>(b + 32 + 16 * j + r0);
      for (int t = 0; t < TB; ++t) {
        const int8_t* xs = xq[t] + 16 * j;
        const I s01 = _mm256_add_epi16(_mm256_maddubs_epi16(u0, Vec::bcast32(xs)), _mm256_maddubs_epi16(u1, Vec::bcast32(xs + 4)));
        const I s23 = _mm256_add_epi16(_mm256_maddubs_epi16(u2, Vec::bcast32(xs + 8)), _mm256_maddubs_epi16(u3, Vec::bcast32(xs + 12)));
        isum[t] = Vec::madd16(Vec::madd16(isum[t], s01, sc), s23, sc);
      }
#else
      I p[TB];
      for (int t = 0; t < TB; ++t) {
        const int8_t* xs = xq[t] + 16 * j;
        p[t] = Vec::dot2(Vec::bcast32(off[t] + j), u0, Vec::bcast32(xs), u1, Vec::bcast32(xs + 4));
        p[t] = Vec::dot2(p[t], u2, Vec::bcast32(xs + 8), u3, Vec::bcast32(xs + 12));
      }
      const I sc = Vec::s8_i32(b + 32 + 16 * j + r0);
      for (int t = 0; t < TB; ++t) isum[t] = Vec::add(isum[t], Vec::mullo(p[t], sc));
#endif
    }
#if defined(WEFT_KG_INT16_SUMS)
    // u = q + 32: isum -= 32 * sum_j sc[j] * sum16[j], two sub-blocks per vpmaddwd.
    for (int j = 0; j < 16; j += 2) {
      const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 32 + 16 * j + r0));
      const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 32 + 16 * (j + 1) + r0));
      const I sc2 = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(lo, hi));
      for (int t = 0; t < TB; ++t) {
        const I xs2 = Vec::bcast32(x.sum16 + (static_cast<size_t>(t0 + t) * blocks + blk) * 16 + j);
        isum[t] = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(_mm256_madd_epi16(sc2, xs2), 5));
      }
    }
#endif
    const F d = Vec::halves(b + 2 * r0);
    for (int t = 0; t < TB; ++t) {
      const F fd = Vec::fmul(d, Vec::set1(x.d[static_cast<size_t>(t0 + t) * blocks + blk]));
      acc[t] = Vec::fadd(acc[t], Vec::fmul(fd, Vec::cvt(isum[t])));
    }
  }
  finish_tile<TB>(acc, b1 < blocks, t0, r0, rows, partial, out, N, bias);
}

template <WeightType W, int TB>
WEFT_KG_INLINE void k_group_tile(const uint8_t* g, int blocks, int b0, int b1, const KQuantInput& x, int t0, int r0, int rows,
                                 float* partial, float* out, size_t N, const float* bias) {
  if constexpr (W == WeightType::Q4_K) q4k_group_tile<TB>(g, blocks, b0, b1, x, t0, r0, rows, partial, out, N, bias);
  else q6k_group_tile<TB>(g, blocks, b0, b1, x, t0, r0, rows, partial, out, N, bias);
}

// The last `count` (< TB) tokens, as one smaller tile.
template <WeightType W, int TB>
WEFT_KG_INLINE void k_group_rest(const uint8_t* g, int blocks, int b0, int b1, const KQuantInput& x, int t0, int count, int r0,
                                 int rows, float* partial, float* out, size_t N, const float* bias) {
  if constexpr (TB > 1) {
    if (count == TB - 1) return k_group_tile<W, TB - 1>(g, blocks, b0, b1, x, t0, r0, rows, partial, out, N, bias);
    k_group_rest<W, TB - 1>(g, blocks, b0, b1, x, t0, count, r0, rows, partial, out, N, bias);
  }
}

// Super-blocks per pass over the activations when there are several token
// tiles: 4 (1024 weights) keep a pass's weights (9.5 / 13 KB per group) and a
// tile's activations (8 KB) in L1; with whole rows of 3072 a 64-token matmul
// ran at half the speed of one of 1024 (measured).
#if !defined(WEFT_KG_BLOCKS_PER_PASS)
#define WEFT_KG_BLOCKS_PER_PASS 4
#endif

// Groups [g0, g1) for all T tokens, weight-stationary: each group is read from
// memory once per matmul and used for every token tile (from L1/L2). With more
// than one tile, long rows go in passes of WEFT_KG_BLOCKS_PER_PASS super-blocks
// over all groups of the range, the accumulators parked in `partial` between
// passes (the per-output order is unchanged).
template <WeightType W>
inline void k_groups(float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N, int K, size_t g0,
                     size_t g1) {
  constexpr int TB = Vec::kTokens;
  const int blocks = K / kSuperBlock;
  const size_t group_bytes = static_cast<size_t>(blocks) * kgroup_block_bytes(W);
  const int per_pass = T > TB ? WEFT_KG_BLOCKS_PER_PASS : blocks;
  // Not zeroed: every pass's first tile writes before any tile reads.
  std::unique_ptr<float[]> partial(per_pass < blocks ? new float[(g1 - g0) * T * kKGroupRows] : nullptr);
  for (int b0 = 0; b0 < blocks; b0 += per_pass) {
    const int b1 = std::min(blocks, b0 + per_pass);
    for (size_t gi = g0; gi < g1; ++gi) {
      const uint8_t* g = w + gi * group_bytes;
      const size_t n = gi * kKGroupRows;
      float* p = partial ? &partial[(gi - g0) * T * kKGroupRows] : nullptr;
      for (int r0 = 0; r0 < kKGroupRows; r0 += Vec::kRows) {
        const int rows = static_cast<int>(std::min<size_t>(Vec::kRows, N - std::min<size_t>(N, n + r0)));
        if (rows <= 0) break;
        const float* b = bias ? bias + n + r0 : nullptr;
        float* o = out + n + r0;
        int t = 0;
        for (; t + TB <= T; t += TB) k_group_tile<W, TB>(g, blocks, b0, b1, x, t, r0, rows, p, o, N, b);
        if (t < T) k_group_rest<W, TB>(g, blocks, b0, b1, x, t, T - t, r0, rows, p, o, N, b);
      }
    }
  }
}

WEFT_KG_INLINE void k_groups_any(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                                 int N, int K, size_t g0, size_t g1) {
  if (type == WeightType::Q4_K) k_groups<WeightType::Q4_K>(out, x, w, bias, T, N, K, g0, g1);
  else if (type == WeightType::Q6_K) k_groups<WeightType::Q6_K>(out, x, w, bias, T, N, K, g0, g1);
}

}  // namespace
}  // namespace weft
