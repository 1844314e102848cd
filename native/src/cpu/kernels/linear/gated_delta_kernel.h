// The vector Gated DeltaNet kernels (gated_delta.h), included by
// gated_delta_avx2.cc and gated_delta_avx512.cc after their Vec16 header
// (vec16_*.h). Internal linkage.
//
// Every element goes through the same operations whichever path computes it:
// the delta rule's columns in groups of vectors, single vectors
// or the scalar tail (std::fma is one FMA lane); the conv's, the norms' and
// the gate's tails through the same vector code on a zero-padded copy. So a
// column's or channel's bits do not depend on the range a call covers, and
// AVX2 and AVX-512 give the same bits.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstring>

#include "base/vec16_exp.h"
#include "kernels/linear/gated_delta.h"

namespace weft {
namespace {

inline Vec16 vsilu(Vec16 x) { return vdiv(x, vadd(vset1(1.0f), exp_clamped(vmul(x, vset1(-1.0f))))); }
// a - b, exactly rounded (b * 1 is exact, so one rounding, as a subtraction).
inline Vec16 vsub(Vec16 a, Vec16 b) { return vfnma(b, vset1(1.0f), a); }

// The delta rule on G vectors of columns from j (G * 16 columns), one token.
// Each column's state entries and sums are independent of every other column's.
template <int G>
inline void delta_columns(float* S, int dk, int dv, int j, const float* q, const float* k, const float* v, float decay,
                          float beta, float* out) {
  Vec16 acc[G];
  for (int g = 0; g < G; ++g) acc[g] = vzero();
  const Vec16 d = vset1(decay);
  for (int i = 0; i < dk; ++i) {  // S *= e^g; acc = S^T k
    float* row = S + static_cast<size_t>(i) * dv + j;
    const Vec16 ki = vset1(k[i]);
    for (int g = 0; g < G; ++g) {
      const Vec16 s = vmul(vload(row + 16 * g), d);
      vstore(row + 16 * g, s);
      acc[g] = vfma(s, ki, acc[g]);
    }
  }
  const Vec16 b = vset1(beta);
  for (int g = 0; g < G; ++g) acc[g] = vmul(b, vsub(vload(v + j + 16 * g), acc[g]));  // now delta
  Vec16 o[G];
  for (int g = 0; g < G; ++g) o[g] = vzero();
  for (int i = 0; i < dk; ++i) {  // S += k (x) delta; o = S^T q
    float* row = S + static_cast<size_t>(i) * dv + j;
    const Vec16 ki = vset1(k[i]), qi = vset1(q[i]);
    for (int g = 0; g < G; ++g) {
      const Vec16 s = vfma(ki, acc[g], vload(row + 16 * g));
      vstore(row + 16 * g, s);
      o[g] = vfma(s, qi, o[g]);
    }
  }
  for (int g = 0; g < G; ++g) vstore(out + j + 16 * g, o[g]);
}

// One column as one lane of delta_columns: the same operations in the same order.
inline void delta_column(float* S, int dk, int dv, int j, const float* q, const float* k, const float* v, float decay, float beta,
                         float* out) {
  float acc = 0;
  for (int i = 0; i < dk; ++i) {
    float& s = S[static_cast<size_t>(i) * dv + j];
    s = s * decay;
    acc = std::fma(s, k[i], acc);
  }
  const float delta = beta * std::fma(-acc, 1.0f, v[j]);
  float o = 0;
  for (int i = 0; i < dk; ++i) {
    float& s = S[static_cast<size_t>(i) * dv + j];
    s = std::fma(k[i], delta, s);
    o = std::fma(s, q[i], o);
  }
  out[j] = o;
}

inline void delta_rule_vec(const DeltaRuleRun& r) {
  // The tokens inside the column loop: a group's Dk x G*16 slice of the state
  // (32 KB for 128 rows of 64 columns) stays in L1 across the call's tokens.
  // G: half the attention kernel's output vectors (AVX-512 4, AVX2 2), so the
  // second pass's delta and output sums stay in registers.
  constexpr int G = kOutVectors / 2;
  auto run_tokens = [&](auto columns, int j) {
    for (int t = 0; t < r.tokens; ++t) {
      const size_t x = t * r.qkv_stride, gt = t * r.gate_stride;
      columns(j, r.q + x, r.k + x, r.v + x, std::exp(r.log_decay[gt]), r.beta[gt], r.out + t * r.out_stride);
    }
  };
  int j = r.col_begin;
  for (; j + 16 * G <= r.col_end; j += 16 * G)
    run_tokens([&](int j0, const float* q, const float* k, const float* v, float d, float b, float* o) {
      delta_columns<G>(r.state, r.dk, r.dv, j0, q, k, v, d, b, o);
    }, j);
  for (; j + 16 <= r.col_end; j += 16)
    run_tokens([&](int j0, const float* q, const float* k, const float* v, float d, float b, float* o) {
      delta_columns<1>(r.state, r.dk, r.dv, j0, q, k, v, d, b, o);
    }, j);
  for (; j < r.col_end; ++j)
    run_tokens([&](int j0, const float* q, const float* k, const float* v, float d, float b, float* o) {
      delta_column(r.state, r.dk, r.dv, j0, q, k, v, d, b, o);
    }, j);
}

// n <= 16 floats from p, zero-padded to 16.
inline Vec16 vload_part(const float* p, int n) {
  if (n == 16) return vload(p);
  float tmp[16] = {0};
  memcpy(tmp, p, n * sizeof(float));
  return vload(tmp);
}
inline void vstore_part(float* p, Vec16 a, int n) {
  if (n == 16) return vstore(p, a);
  float tmp[16];
  vstore(tmp, a);
  memcpy(p, tmp, n * sizeof(float));
}

// Channels [c, c + n), n <= 16, as one vector of lanes.
inline void conv_channels(const ConvRun& r, int c, int n) {
  const int K = r.K;
  Vec16 w[16], win[16];
  for (int j = 0; j < K; ++j) {
    float tap[16] = {0};
    for (int l = 0; l < n; ++l) tap[l] = r.taps[static_cast<size_t>(c + l) * K + j];
    w[j] = vload(tap);
  }
  for (int j = 0; j < K - 1; ++j) win[j] = vload_part(r.window + j * r.window_stride + c, n);
  for (int t = 0; t < r.tokens; ++t) {
    float* u = r.rows + t * r.row_stride + c;
    const Vec16 x = vload_part(u, n);
    Vec16 acc = vzero();
    for (int j = 0; j < K - 1; ++j) acc = vfma(w[j], win[j], acc);
    acc = vfma(w[K - 1], x, acc);
    for (int j = 0; j + 1 < K - 1; ++j) win[j] = win[j + 1];
    if (K > 1) win[K - 2] = x;
    vstore_part(u, vsilu(acc), n);
  }
  for (int j = 0; j < K - 1; ++j) vstore_part(r.window + j * r.window_stride + c, win[j], n);
}

inline void conv_silu_vec(const ConvRun& r) {
  for (int c = 0; c < r.channels; c += 16) conv_channels(r, c, r.channels - c < 16 ? r.channels - c : 16);
}

// sum(x^2) over n floats: lane l sums elements l, l + 16, ... in order, then vhsum.
inline float sum_squares(const float* x, int n) {
  Vec16 acc = vzero();
  for (int i = 0; i < n; i += 16) {
    const Vec16 a = vload_part(x + i, n - i < 16 ? n - i : 16);
    acc = vfma(a, a, acc);
  }
  return vhsum(acc);
}

inline void l2_normalise_vec(float* x, int n, float scale) {
  const Vec16 inv = vset1(static_cast<float>(1.0 / std::sqrt(static_cast<double>(sum_squares(x, n)) + 1e-6)) * scale);
  for (int i = 0; i < n; i += 16) {
    const int m = n - i < 16 ? n - i : 16;
    vstore_part(x + i, vmul(vload_part(x + i, m), inv), m);
  }
}

inline void gated_rmsnorm_vec(float* o, const float* z, const float* weight, int n, float eps) {
  const Vec16 scale = vset1(static_cast<float>(1.0 / std::sqrt(static_cast<double>(sum_squares(o, n)) / n + eps)));
  for (int i = 0; i < n; i += 16) {
    const int m = n - i < 16 ? n - i : 16;
    const Vec16 y = vmul(vmul(vload_part(weight + i, m), vmul(vload_part(o + i, m), scale)), vsilu(vload_part(z + i, m)));
    vstore_part(o + i, y, m);
  }
}

}  // namespace
}  // namespace weft
