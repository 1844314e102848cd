// The AMX-INT8 kernel for Q8_0 matrices in row groups (quant_repack.h), for
// prefill and large batched steps. It reads the row groups as they are: one
// unit's weights of a group, [8 chunks][8 rows][4 bytes], are exactly an AMX
// B tile of 8 rows x 32 bytes (K = 32 weights x N = 8 rows), so nothing is
// repacked at load and no weight is held twice. The A tile is 16 tokens x the
// unit's 32 activation bytes, read in place at stride K. From
// kPairCopyTokens on, a call copies its groups into pairs (B tiles of 16
// rows: one tile product per unit instead of two), a copy that pays back
// over 4+ token tiles (measured, docs/performance.md).
//
// Per unit, tdpbsud (signed activations x unsigned weights u = q + 128) gives
// a 16 tokens x 16 rows (two groups) int32 tile of exact dot products; AVX-512
// then applies the unit's scales in the row-group order of quant.cc
// (quant_groups_baseline):
//   p = tile + (-128 * sum(x block));  acc += (d[r][u] * xs[t][u]) * float(p)
//   out = acc + (bias ? bias[r] : 0)
// unit by unit, FMA contraction off: bit-identical to the baseline, AVX2,
// AVX-VNNI and AVX512-VNNI kernels (bench/amx checked it on an AMX CPU;
// test/native/amx-kernels.test.ts does where it runs on one).
//
// Called only where cpu_uses_amx() (cpu_features.h): the process has asked
// Linux for the tile state. Each call configures the tiles for its own thread
// and releases them when done.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/quant/quant_formats.h"

namespace weft {

// The fewest tokens the AMX kernel is used for: one A tile holds 16 tokens,
// and below that the AVX512-VNNI kernel's 8-token register tiles waste less.
constexpr int kAmxMinTokens = 16;

// Groups [g0, g1) for all T tokens, the QuantGroups signature of quant.cc
// (group N / 8 is `tail` when N % 8 rows are left). Q8_0 only; another type
// goes to quant_groups_avx512vnni.
void quant_groups_amx(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                      const float* bias, int T, int N, int K, size_t g0, size_t g1);

}  // namespace weft
