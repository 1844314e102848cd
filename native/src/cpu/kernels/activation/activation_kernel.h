// The vector activations, included by activation_avx2.cc and
// activation_avx512.cc after their Vec16 header (vec16_*.h). Internal linkage.
#pragma once
#include <cstddef>
#include <cstring>

#include "base/vec16_exp.h"

namespace weft {
namespace {

inline Vec16 silu_mul16(Vec16 g, Vec16 u) {
  const Vec16 e = exp_clamped(vmul(g, vset1(-1.0f)));  // e^-g
  return vmul(vdiv(g, vadd(vset1(1.0f), e)), u);
}

inline void silu_mul_vec(float* gate, const float* up, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) vstore(gate + i, silu_mul16(vload(gate + i), vload(up + i)));
  if (i < n) {  // the tail through the same vector code, so no element depends on where the range starts
    float g[16] = {0}, u[16] = {0};
    memcpy(g, gate + i, (n - i) * sizeof(float));
    memcpy(u, up + i, (n - i) * sizeof(float));
    vstore(g, silu_mul16(vload(g), vload(u)));
    memcpy(gate + i, g, (n - i) * sizeof(float));
  }
}

}  // namespace
}  // namespace weft
