// Matrix products with the k-quant super-block formats Q4_K and Q6_K (256
// weights per block, GGUF layout as stored, see quant_formats.h), the
// llama.cpp way: the activations are quantized per 256-block (one float scale
// and int16 sums of each 16 values), so a whole super-block is one exact int32
// sum per lane, and floats are touched once per super-block, not per 32-unit.
//
// The reference order (quant_k.cc, the baseline), for one output, per
// super-block b of the row, with lanes l = 0..7 (lane l of unit j covers
// weights 32j + 4l .. 32j + 4l + 3):
//   Q4_K: isum[l] = sum_j sc[j] * (q_j . x over lane l)       (q = nibble 0..15)
//         msum[l] = m[l] * (xsum16[2l] + xsum16[2l + 1])     (the mins)
//         acc[l] += (d * xd) * float(isum[l]) - (dmin * xd) * float(msum[l])
//   Q6_K: isum[l] = sum_j sc[2j + l/4] * (u_j . x over lane l) - 32 * (sc[2l] * xsum16[2l] + sc[2l+1] * xsum16[2l+1])
//         (u = the 6-bit value 0..63, i.e. q + 32)
//         acc[l] += (d * xd) * float(isum[l])
//   out = ((acc0 + acc1) + (acc2 + acc3)) + ((acc4 + acc5) + (acc6 + acc7)) + bias
// The integers are exact (no int16 or int32 overflow for any block: |pair| <=
// 2 * 63 * 127, |isum| < 2^26), and every kernel set (baseline, AVX2,
// AVX-VNNI, AVX512-VNNI) does these float steps in this order without FMA
// contraction: bit-identical results for any T, thread count or batch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu_features.h"
#include "matmul.h"
#include "thread_pool.h"

namespace weft {

constexpr int kSuperBlock = 256;  // weights per Q4_K / Q6_K block and per activation block

static inline bool is_k_quant(WeightType t) { return t == WeightType::Q4_K || t == WeightType::Q6_K; }

// Activations of one matmul, quantized per 256-block to int8 (round to nearest
// even, |q| <= 127): x ~= q * d.
struct KQuantInput {
  const int8_t* q;       // [T][K]
  const float* d;        // [T][K / 256]
  const int16_t* sum16;  // [T][K / 16]: the sum of each 16 consecutive q
};

// out[T][N] = in[T][K] @ w^T (+ bias) for w of type Q4_K or Q6_K (K a multiple
// of 256), with the kernels of `set`. False, computing nothing, when this build
// or CPU has no such set.
bool kquant_matmul(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                   const float* bias, int T, int N, int K);

// Whether this build and CPU have the set's Q4_K / Q6_K kernels.
bool kquant_runs(KernelSet set);

// The row kernels: rows [n0, n1) of out for all T tokens.
using KQuantRows = void (*)(WeightType, float*, const KQuantInput&, const uint8_t*, const float*, int, int, int, size_t,
                            size_t);
void kquant_rows_baseline(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                          int N, int K, size_t n0, size_t n1);
void kquant_rows_avx2(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T, int N,
                      int K, size_t n0, size_t n1);
void kquant_rows_avxvnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                         int N, int K, size_t n0, size_t n1);
void kquant_rows_avx512vnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                            int N, int K, size_t n0, size_t n1);

// Q4_K: the 12 packed bytes of 6-bit scales and mins as four little-endian
// words of bytes: scales 0-3, scales 4-7, mins 0-3, mins 4-7 (the same values
// as q4k_scale_min in quant_formats.h, a few word operations; assumes a
// little-endian CPU, as every target here is).
static inline void q4k_unpack_scale_words(const uint8_t* s, uint32_t out[4]) {
  uint32_t u0, u1, u2;
  std::memcpy(&u0, s, 4);
  std::memcpy(&u1, s + 4, 4);
  std::memcpy(&u2, s + 8, 4);
  const uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, two = 0x03030303;
  out[0] = u0 & low6;
  out[1] = (u2 & low4) | (((u0 >> 6) & two) << 4);
  out[2] = u1 & low6;
  out[3] = ((u2 >> 4) & low4) | (((u1 >> 6) & two) << 4);
}

// The same as 8 scales and 8 mins.
static inline void q4k_unpack_scales(const uint8_t* s, uint8_t sc[8], uint8_t m[8]) {
  uint32_t words[4];
  q4k_unpack_scale_words(s, words);
  std::memcpy(sc, words, 8);
  std::memcpy(m, words + 2, 8);
}

}  // namespace weft
