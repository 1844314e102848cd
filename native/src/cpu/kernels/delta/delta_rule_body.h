// The loops of the delta rule (delta_rule.h), included by each kernel set's
// file: the compiler vectorizes the inner loops over Dv to that set's width.
// Every element's operations stay in the scalar order (the files are built
// with -ffp-contract=off), so the sets agree bit for bit.
#pragma once
#include <algorithm>

namespace weft {

inline void delta_rule_body(float* __restrict S, const float* __restrict q, const float* __restrict k, const float* __restrict v,
                            float decay, float beta, int Dk, int Dv, float* __restrict kv, float* __restrict o) {
  std::fill(kv, kv + Dv, 0.0f);
  for (int i = 0; i < Dk; ++i) {
    float* __restrict row = S + static_cast<size_t>(i) * Dv;
    const float ki = k[i];
    for (int j = 0; j < Dv; ++j) {
      row[j] *= decay;
      kv[j] += row[j] * ki;
    }
  }
  for (int j = 0; j < Dv; ++j) kv[j] = beta * (v[j] - kv[j]);  // now delta
  std::fill(o, o + Dv, 0.0f);
  for (int i = 0; i < Dk; ++i) {
    float* __restrict row = S + static_cast<size_t>(i) * Dv;
    const float ki = k[i], qi = q[i];
    for (int j = 0; j < Dv; ++j) {
      row[j] += ki * kv[j];
      o[j] += row[j] * qi;
    }
  }
}

}  // namespace weft
