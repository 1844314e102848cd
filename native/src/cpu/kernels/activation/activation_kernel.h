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

// 0.5 x (1 + erf(x / sqrt 2)), exact GELU, on 16 lanes. With u = x / sqrt 2,
// a = |u| and t = 1 / (1 + p a): erfc(a) ~ t P(t) e^(-a^2), P a degree-5
// polynomial (Abramowitz and Stegun 7.1.26: |error of erf| < 1.5e-7), and
// 1 + erf(u) = 1 + s (1 - erfc(a)) with s the sign of u (branch-free: u times
// 2^60, clamped to [-1, 1]; a u small enough to give a fraction has
// 1 - erfc(a) ~ 1.13 a, so the fraction costs under 1e-18). Against the exact
// GELU within 2e-7 absolute plus 2e-7 relative (test/native/gelu.test.ts);
// +inf gives +inf and NaN NaN, as the scalar form does.
inline Vec16 gelu_erf16(Vec16 x) {
  const Vec16 u = vmul(x, vset1(0.70710678118654752440f));
  const Vec16 a = vmax(u, vmul(u, vset1(-1.0f)));
  const Vec16 t = vdiv(vset1(1.0f), vfma(a, vset1(0.3275911f), vset1(1.0f)));
  Vec16 p = vset1(1.061405429f);
  p = vfma(p, t, vset1(-1.453152027f));
  p = vfma(p, t, vset1(1.421413741f));
  p = vfma(p, t, vset1(-0.284496736f));
  p = vfma(p, t, vset1(0.254829592f));
  const Vec16 erfc_a = vmul(vmul(p, t), exp_clamped(vmul(vmul(a, a), vset1(-1.0f))));
  const Vec16 sign = vmin(vset1(1.0f), vmax(vset1(-1.0f), vmul(u, vset1(1152921504606846976.0f))));
  const Vec16 one_plus_erf = vfma(sign, vadd(vset1(1.0f), vmul(erfc_a, vset1(-1.0f))), vset1(1.0f));
  return vmul(vmul(x, vset1(0.5f)), one_plus_erf);
}

inline void gelu_erf_vec(float* x, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) vstore(x + i, gelu_erf16(vload(x + i)));
  if (i < n) {  // the tail through the same vector code
    float v[16] = {0};
    memcpy(v, x + i, (n - i) * sizeof(float));
    vstore(v, gelu_erf16(vload(v)));
    memcpy(x + i, v, (n - i) * sizeof(float));
  }
}

}  // namespace
}  // namespace weft
