// The k-quant super-block formats Q4_K and Q6_K as the kernels see them: the
// activations quantized per 256-block (KQuantInput), the per-set kernel entry
// points that quant_k.cc picks from, and the Q4_K scale unpacking. Below
// quant_k.h (the matmul and projection entries, and the order every kernel
// keeps): the kernel bodies (quant_k_kernels.h, quant_k_group_kernels.h)
// include this, never quant_k.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul_types.h"

namespace weft {

constexpr int kSuperBlock = 256;  // weights per Q4_K / Q6_K block and per activation block

static inline bool is_k_quant(WeightType t) { return t == WeightType::Q4_K || t == WeightType::Q6_K; }

// Activations of one matmul, quantized per 256-block to int8 (round to nearest
// even, |q| <= 127): x ~= q * d.
struct KQuantInput {
  const int8_t* q;         // [T][K]
  const float* d;          // [T][K / 256]
  const int16_t* sum16;    // [T][K / 16]: the sum of each 16 consecutive q
  const int16_t* sum32;    // [T][K / 32]: the sum of each 32 (Q4_K's mins)
  const int32_t* offset16; // [T][K / 16]: -32 * sum16 (Q6_K's stored u = q + 32)
};

// The k-group kernels: groups [g0, g1) of 16 rows (outputs of rows >= N are
// not written) for all T tokens.
using KQuantGroups = void (*)(WeightType, float*, const KQuantInput&, const uint8_t*, const float*, int, int, int, size_t,
                              size_t);
void kquant_groups_baseline(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                            int N, int K, size_t g0, size_t g1);
void kquant_groups_avx2(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                        int N, int K, size_t g0, size_t g1);
void kquant_groups_avxvnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                           int N, int K, size_t g0, size_t g1);
void kquant_groups_avx512vnni(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias,
                              int T, int N, int K, size_t g0, size_t g1);

// The activations' quantization with AVX2 (quant_k_avx2.cc; any set above the
// baseline uses it): the same values as the baseline's (quant_k.cc).
void quantize_input_k_avx2(const float* x, int K, int8_t* q, float* d, int16_t* sum16, int16_t* sum32, int32_t* offset16);

// The GGUF row kernels: rows [n0, n1) of out for all T tokens.
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
