// The baseline Gated DeltaNet kernels (the portable scalar code the layer ran
// before it had vector kernels, unchanged in its float order) and the choice
// of kernels by kernel set.
#include "kernels/linear/gated_delta.h"

#include <algorithm>
#include <cmath>

namespace weft {
namespace {

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float silu(float x) { return x * sigmoid(x); }

void delta_rule_baseline(const DeltaRuleRun& r) {
  const int j0 = r.col_begin, j1 = r.col_end;
  float kv[512];  // dv <= 512 (checked in binding.cc)
  for (int t = 0; t < r.tokens; ++t) {
    const float* q = r.q + t * r.qkv_stride;
    const float* k = r.k + t * r.qkv_stride;
    const float* v = r.v + t * r.qkv_stride;
    const float decay = std::exp(r.log_decay[t * r.gate_stride]);
    const float beta = r.beta[t * r.gate_stride];
    std::fill(kv + j0, kv + j1, 0.0f);
    for (int i = 0; i < r.dk; ++i) {
      float* row = r.state + static_cast<size_t>(i) * r.dv;
      for (int j = j0; j < j1; ++j) {
        row[j] *= decay;
        kv[j] += row[j] * k[i];
      }
    }
    for (int j = j0; j < j1; ++j) kv[j] = beta * (v[j] - kv[j]);  // now delta
    float* o = r.out + t * r.out_stride;
    std::fill(o + j0, o + j1, 0.0f);
    for (int i = 0; i < r.dk; ++i) {
      float* row = r.state + static_cast<size_t>(i) * r.dv;
      for (int j = j0; j < j1; ++j) {
        row[j] += k[i] * kv[j];
        o[j] += row[j] * q[i];
      }
    }
  }
}

void conv_silu_baseline(const ConvRun& r) {
  const int K = r.K;
  float window[16];
  for (int ch = 0; ch < r.channels; ++ch) {
    const float* w = r.taps + static_cast<size_t>(ch) * K;
    for (int j = 0; j < K - 1; ++j) window[j] = r.window[j * r.window_stride + ch];
    for (int t = 0; t < r.tokens; ++t) {
      float& u = r.rows[t * r.row_stride + ch];
      float acc = 0;
      for (int j = 0; j < K - 1; ++j) acc += w[j] * window[j];
      acc += w[K - 1] * u;
      for (int j = 0; j + 1 < K - 1; ++j) window[j] = window[j + 1];
      if (K > 1) window[K - 2] = u;
      u = silu(acc);
    }
    for (int j = 0; j < K - 1; ++j) r.window[j * r.window_stride + ch] = window[j];
  }
}

void l2_normalise_baseline(float* x, int n, float scale) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(sum + 1e-6)) * scale;
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

void gated_rmsnorm_baseline(float* o, const float* z, const float* weight, int n, float eps) {
  // model/layer_ops.h's rmsnorm, then the gate.
  double part[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) part[k] += static_cast<double>(o[i + k]) * o[i + k];
  double sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; i < n; ++i) sum += static_cast<double>(o[i]) * o[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(sum / n + eps));
  for (i = 0; i < n; ++i) o[i] = weight[i] * (o[i] * scale) * silu(z[i]);
}

}  // namespace

const LinearAttentionKernels kLinearAttentionBaseline = {delta_rule_baseline, conv_silu_baseline, l2_normalise_baseline,
                                                         gated_rmsnorm_baseline, "baseline"};

const LinearAttentionKernels* linear_attention_kernels_of(KernelSet set) {
  if (!cpu_supports(set)) return nullptr;
  if (set == KernelSet::Baseline) return &kLinearAttentionBaseline;
#if defined(WEFT_AVX512_ATTENTION)
  if (set == KernelSet::Avx512Vnni) return &kLinearAttentionAvx512;
#endif
#if defined(WEFT_AVX2_KERNELS)
  return &kLinearAttentionAvx2;
#else
  return nullptr;
#endif
}

const LinearAttentionKernels& linear_attention_kernels() {
  static const LinearAttentionKernels* kernels = linear_attention_kernels_of(cpu_kernel_set());
  return kernels ? *kernels : kLinearAttentionBaseline;
}

}  // namespace weft
