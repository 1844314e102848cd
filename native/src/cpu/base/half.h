// IEEE half (f16) and bfloat16 conversions, portable (no F16C needed).
// static: every translation unit keeps its own copy (matmul_avx2.cc is built
// for newer CPUs than the rest).
#pragma once
#include <cstdint>
#include <cstring>

namespace weft {

static inline float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint32_t float_to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// bfloat16 is the top half of a float32.
static inline float bf16_to_f32(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

// Branch-free (so loops of it vectorise): the half's exponent and mantissa
// placed in a float's low exponent bits give the value times 2^-112, exactly,
// for normal and subnormal halves alike; exponent 31 (inf/nan) is patched in.
static inline float f16_to_f32(uint16_t h) {
  const uint32_t magnitude = static_cast<uint32_t>(h & 0x7fffu) << 13;
  uint32_t bits = float_to_bits(bits_to_float(magnitude) * 0x1p112f);
  bits |= (h & 0x7c00u) == 0x7c00u ? 0x7f800000u : 0u;
  return bits_to_float(bits | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

// Round to nearest, ties to even; overflow becomes inf, NaN stays NaN.
static inline uint16_t f32_to_f16(float f) {
  const uint32_t x = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero) in half precision: |f| < 2^-14.
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs >> 13) - (112u << 10));
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | half);
}

}  // namespace weft
