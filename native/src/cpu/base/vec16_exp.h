// exp on 16 lanes, with the Vec16 operations of the including build
// (vec16_avx2.h or vec16_avx512.h; both give the same bits): exp_nonpositive
// for softmax weights, exp_clamped for any argument (the SiLU).
//
// x = n ln2 + r, n = round(x / ln2), |r| <= ln2 / 2 (ln2 in two parts, so
// n * ln2_hi is exact); e^r by its Taylor polynomial of degree 7 (truncation
// below 7.5e-9 relative on that interval), Horner with FMA; then times 2^n
// from the exponent bits. Measured against double-precision exp on every
// float in [-87.3, 88] (bench/attention --check-exp): under 1 ulp (relative
// error under 8e-8). Results below 2^-126 (x < -87.3, -inf included) come out
// as 0 or subnormal: next to a softmax row's largest weight, 1, they are lost
// in its sum anyway. NaN stays NaN.
#pragma once

namespace weft {
namespace {

// e^x for x in [-88, 88] (the callers clamp).
inline Vec16 exp_reduced(Vec16 x) {
  const Vec16 n = vround(vmul(x, vset1(1.44269504088896341f)));
  Vec16 r = vfnma(n, vset1(0.693145751953125f), x);
  r = vfnma(n, vset1(1.42860682030941723212e-6f), r);
  Vec16 p = vset1(1.0f / 5040);
  p = vfma(p, r, vset1(1.0f / 720));
  p = vfma(p, r, vset1(1.0f / 120));
  p = vfma(p, r, vset1(1.0f / 24));
  p = vfma(p, r, vset1(1.0f / 6));
  p = vfma(p, r, vset1(0.5f));
  p = vfma(p, r, vset1(1.0f));
  p = vfma(p, r, vset1(1.0f));
  return vmul(p, vpow2(n));
}

inline Vec16 exp_nonpositive(Vec16 x) {
  return exp_reduced(vmax(vset1(-88.0f), x));  // -inf -> -88 (2^-127 -> 0); a NaN x stays
}

// x clamped to [-88, 88] first (e^88 = 1.65e38 < FLT_MAX; a NaN x stays NaN).
inline Vec16 exp_clamped(Vec16 x) { return exp_reduced(vmin(vset1(88.0f), vmax(vset1(-88.0f), x))); }

}  // namespace
}  // namespace weft
