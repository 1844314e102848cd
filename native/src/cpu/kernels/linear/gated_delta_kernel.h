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

// The first pass of token t on G vectors of columns from j, over the rows of S:
// S *= e^g; returns in acc S^T k (each column's sum over the rows in order).
template <int G>
inline void decay_and_project(float* S, int dk, int dv, int j, const float* k, float decay, Vec16 (&acc)[G]) {
  for (int g = 0; g < G; ++g) acc[g] = vzero();
  const Vec16 d = vset1(decay);
  for (int i = 0; i < dk; ++i) {
    float* row = S + static_cast<size_t>(i) * dv + j;
    const Vec16 ki = vset1(k[i]);
    for (int g = 0; g < G; ++g) {
      const Vec16 s = vmul(vload(row + 16 * g), d);
      vstore(row + 16 * g, s);
      acc[g] = vfma(s, ki, acc[g]);
    }
  }
}

// The delta rule on G vectors of columns from j (G * 16 columns), over the
// run's tokens in order. Token t's second pass (S += k (x) delta; o = S^T q)
// and token t + 1's first pass share one sweep over the rows: each state entry
// goes through the same operations in the same order as in two sweeps (so the
// bits do not depend on how many tokens a run has), loaded and stored once a
// token instead of twice. Each column is independent of every other.
template <int G>
inline void delta_columns(const DeltaRuleRun& r, int j) {
  const int dk = r.dk, dv = r.dv;
  Vec16 acc[G], next[G], o[G];
  decay_and_project<G>(r.state, dk, dv, j, r.k, std::exp(r.log_decay[0]), acc);
  for (int t = 0; t < r.tokens; ++t) {
    const float* q = r.q + t * r.qkv_stride;
    const float* k = r.k + t * r.qkv_stride;
    const float* v = r.v + t * r.qkv_stride;
    const Vec16 beta = vset1(r.beta[t * r.gate_stride]);
    for (int g = 0; g < G; ++g) acc[g] = vmul(beta, vsub(vload(v + j + 16 * g), acc[g]));  // now delta
    for (int g = 0; g < G; ++g) o[g] = next[g] = vzero();
    const bool more = t + 1 < r.tokens;
    const float* k_next = more ? k + r.qkv_stride : k;
    const Vec16 d_next = vset1(more ? std::exp(r.log_decay[(t + 1) * r.gate_stride]) : 1.0f);
    for (int i = 0; i < dk; ++i) {
      float* row = r.state + static_cast<size_t>(i) * dv + j;
      const Vec16 ki = vset1(k[i]), qi = vset1(q[i]), kn = vset1(k_next[i]);
      for (int g = 0; g < G; ++g) {
        Vec16 s = vfma(ki, acc[g], vload(row + 16 * g));
        o[g] = vfma(s, qi, o[g]);
        if (more) {  // token t + 1's first pass
          s = vmul(s, d_next);
          next[g] = vfma(s, kn, next[g]);
        }
        vstore(row + 16 * g, s);
      }
    }
    float* out = r.out + t * r.out_stride + j;
    for (int g = 0; g < G; ++g) {
      vstore(out + 16 * g, o[g]);
      acc[g] = next[g];
    }
  }
}

// One column, one token, as one lane of delta_columns: the same operations in the same order.
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
  // (32 KB for 128 rows of 64 columns) stays in L1 across the run's tokens.
  // G: half the attention kernel's output vectors (AVX-512 4, AVX2 2), so the
  // sweep's delta, output and next sums stay in registers (AVX-512; AVX2 spills a few).
  constexpr int G = kOutVectors / 2;
  int j = r.col_begin;
  for (; j + 16 * G <= r.col_end; j += 16 * G) delta_columns<G>(r, j);
  for (; j + 16 <= r.col_end; j += 16) delta_columns<1>(r, j);
  for (; j < r.col_end; ++j)
    for (int t = 0; t < r.tokens; ++t) {
      const size_t x = t * r.qkv_stride, gt = t * r.gate_stride;
      delta_column(r.state, r.dk, r.dv, j, r.q + x, r.k + x, r.v + x, std::exp(r.log_decay[gt]), r.beta[gt], r.out + t * r.out_stride);
    }
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
