// Rows of float32 to IEEE half, rounded to nearest even: the KV cache's f16
// writes (kv_cache.cc). The baseline converts one value at a time with
// f32_to_f16 (half.h); the F16C build (half_rows_f16c.cc, any CPU of the AVX2
// set) converts 8 at a time with vcvtps2ph. Both round the same way, so every
// finite value and infinity gives the same bits; a NaN stays a quiet NaN of
// its sign (F16C keeps the top of its payload, the baseline drops it).
#pragma once
#include <cstdint>

namespace weft {

using ToHalfFn = void (*)(const float* src, uint16_t* dst, int n);

// The conversion of this process's kernel set (cpu_features.h).
ToHalfFn to_half_kernel();

void to_half_baseline(const float* src, uint16_t* dst, int n);
void to_half_f16c(const float* src, uint16_t* dst, int n);

}  // namespace weft
