// GGUF/ggml block formats, byte for byte as GGUF files store them, and the one
// integer view of a block that every quantized kernel computes with.
//
// A row of K weights is K / 32 (Q8_0, Q4_0) or K / 256 (Q4_K, Q6_K) blocks,
// back to back. Each kernel sees a row as "units" of 32 weights: 32 small
// integers q[i] and a scale per half (16 weights), plus for Q4_K a min, so that
//   weight[i] = scale[i / 16] * q[i] - min.
//   Q8_0  34 bytes / 32: f16 d, int8 q[32]                      q = q,        scale = d
//   Q4_0  18 bytes / 32: f16 d, nibbles (low: 0..15, high: 16..31)  q = n - 8,  scale = d
//   Q4_K 144 bytes / 256: f16 d, f16 dmin, 12 bytes of 6-bit (scale, min) per
//        unit, 128 bytes of nibbles: units 2j and 2j+1 are the low and high
//        nibbles of bytes 32j..32j+31                          q = n (0..15), scale = d * sc, min = dmin * m
//   Q6_K 210 bytes / 256: 128 bytes low nibbles, 64 bytes of 2-bit high parts,
//        int8 scale per 16 weights, f16 d                     q = n - 32,   scale = d * sc[half]
// d * sc and dmin * m are exact in float32 (11-bit times 8-bit integers).
//
// Everything here is `static inline` (internal linkage): each kernel build
// (quant.cc, quant_avx2.cc, ...) keeps its own copy for its own instruction set.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/half.h"
#include "kernels/matmul_types.h"

namespace weft {

constexpr int kQuantUnit = 32;  // weights per unit (and per activation block)

struct BlockFormat {
  int weights;  // per block
  int bytes;    // per block
};

static constexpr inline BlockFormat block_format(WeightType t) {
  switch (t) {
    case WeightType::Q8_0: return {32, 34};
    case WeightType::Q4_0: return {32, 18};
    case WeightType::Q4_K: return {256, 144};
    case WeightType::Q6_K: return {256, 210};
    default: return {0, 0};
  }
}

static inline bool is_quantized(WeightType t) { return block_format(t).weights != 0; }

// Bytes of one row of K weights (K a multiple of the block's weights).
static inline size_t quant_row_bytes(WeightType t, int64_t K) {
  const BlockFormat f = block_format(t);
  return static_cast<size_t>(K / f.weights) * f.bytes;
}

static inline uint16_t read_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// Q4_K: the 6-bit scale and min of unit j (0..7) of a super-block.
static inline void q4k_scale_min(const uint8_t* s, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Unit u of a row: where its block starts, and its index inside the block.
static inline const uint8_t* unit_block(WeightType t, const uint8_t* row, int u, int* index_in_block) {
  const BlockFormat f = block_format(t);
  const int per_block = f.weights / kQuantUnit;
  *index_in_block = u % per_block;
  return row + static_cast<size_t>(u / per_block) * f.bytes;
}

// Unit u of a row as integers, scales and min (the scalar reference decoding;
// the SIMD kernels decode the same values, see quant_kernels.h).
static inline void decode_unit(WeightType t, const uint8_t* row, int u, int8_t q[32], float scale[2], float* min) {
  int j;
  const uint8_t* b = unit_block(t, row, u, &j);
  *min = 0;
  switch (t) {
    case WeightType::Q8_0:
      scale[0] = scale[1] = f16_to_f32(read_u16(b));
      std::memcpy(q, b + 2, 32);
      break;
    case WeightType::Q4_0:
      scale[0] = scale[1] = f16_to_f32(read_u16(b));
      for (int i = 0; i < 16; ++i) {
        q[i] = static_cast<int8_t>((b[2 + i] & 0x0f) - 8);
        q[i + 16] = static_cast<int8_t>((b[2 + i] >> 4) - 8);
      }
      break;
    case WeightType::Q4_K: {
      int sc, m;
      q4k_scale_min(b + 4, j, &sc, &m);
      scale[0] = scale[1] = f16_to_f32(read_u16(b)) * static_cast<float>(sc);
      *min = f16_to_f32(read_u16(b + 2)) * static_cast<float>(m);
      const uint8_t* qs = b + 16 + 32 * (j / 2);
      for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(j % 2 ? qs[i] >> 4 : qs[i] & 0x0f);
      break;
    }
    case WeightType::Q6_K: {
      const int half = j / 4, quarter = j % 4;  // 128-weight half, 32-weight quarter of it
      const uint8_t* ql = b + 64 * half + 32 * (quarter % 2);
      const uint8_t* qh = b + 128 + 32 * half;
      const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192) + 8 * half + 2 * quarter;
      const float d = f16_to_f32(read_u16(b + 208));
      scale[0] = d * static_cast<float>(sc[0]);
      scale[1] = d * static_cast<float>(sc[1]);
      for (int i = 0; i < 32; ++i) {
        const int low = quarter >= 2 ? ql[i] >> 4 : ql[i] & 0x0f;
        const int high = (qh[i] >> (2 * quarter)) & 3;
        q[i] = static_cast<int8_t>((low | (high << 4)) - 32);
      }
      break;
    }
    default:
      break;
  }
}

// The end of every quantized output, in every kernel: lane sums (lanes[j] =
// even units' sum + odd units' sum of lane j) added pairwise, then the mins.
static inline float finish_units(const float lanes[8], float min_even, float min_odd) {
  return (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))) -
         (min_even + min_odd);
}

// Activations of one matmul, quantized per 32-block to int8 (round to nearest
// even, |q| <= 127): x ~= q * scale. sum = the block's sum of q (for Q4_K's mins).
struct QuantizedInput {
  const int8_t* q;       // [T][K]
  const float* scale;    // [T][K / 32]
  const int32_t* sum;    // [T][K / 32]
  // [T][K / 32]: - offset * sum, for the row-grouped types (quant_repack.h).
  const int32_t* offset_sum = nullptr;
};

// Signature of the SIMD row kernels (quant_avx2.cc, ...): rows [n0, n1) of out.
void quant_rows_avx2(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const float* bias, int T, int N,
                     int K, size_t n0, size_t n1);
void quant_rows_avxvnni(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const float* bias, int T,
                        int N, int K, size_t n0, size_t n1);
void quant_rows_avx512vnni(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const float* bias, int T,
                           int N, int K, size_t n0, size_t n1);

// The activation quantizer (quant.cc) with AVX2: the same results.
void quantize_input_avx2(const float* x, int K, int8_t* q, float* scale, int32_t* sum);

// The row-group kernels for Q8_0 / Q4_0 (quant_group_kernels.h): groups
// [g0, g1) of 8 rows of w (quant_repack.h); group N / 8, when N % 8 rows are
// left, is `tail` (those rows packed by pack_group).
void quant_groups_avx2(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                       const float* bias, int T, int N, int K, size_t g0, size_t g1);
void quant_groups_avxvnni(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                          const float* bias, int T, int N, int K, size_t g0, size_t g1);
void quant_groups_avx512vnni(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                             const float* bias, int T, int N, int K, size_t g0, size_t g1);

}  // namespace weft
