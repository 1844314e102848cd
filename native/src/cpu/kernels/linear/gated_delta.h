// The per-token math of a Gated DeltaNet layer (model/linear_attention.cc)
// between its projections, built like the activations: baseline
// (gated_delta.cc, the portable scalar code), AVX2 (gated_delta_avx2.cc) and
// AVX-512 (gated_delta_avx512.cc), the last two the same vector code
// (gated_delta_kernel.h, on Vec16) with the same bits; picked once by the
// process's kernel set (cpu_features.h).
//
// Invariant (what lets the engine split a prompt anywhere): every kernel
// processes a sequence's tokens in order, one at a time, and a token's result
// depends only on the state left by the tokens before it and its own inputs,
// never on how many tokens one call was given, where a call starts, which
// columns or channels a call covers, or which thread runs it. So a prompt run
// in one call or in calls of any size gives the same bits, in every set (the
// sets differ from one another in rounding only).
#pragma once
#include <cstddef>

#include "base/cpu_features.h"

namespace weft {

// One value head's delta rule over consecutive tokens of one sequence, on the
// state columns [col_begin, col_end) (columns are independent, so a head may
// be split across threads by column). Per token t, in order:
//   S *= e^g;  delta = beta * (v - S^T k);  S += k (x) delta;  out = S^T q
// S is [dk][dv] row-major; q and k have dk floats, v and out dv (only the
// call's columns of out are written). Token t's q, k, v sit at
// + t * qkv_stride, its g and beta at [t * gate_stride], its out at
// + t * out_stride.
struct DeltaRuleRun {
  float* state = nullptr;
  int dk = 0, dv = 0;
  int col_begin = 0, col_end = 0;
  int tokens = 0;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  size_t qkv_stride = 0;
  const float* log_decay = nullptr;  // g (<= 0)
  const float* beta = nullptr;
  size_t gate_stride = 0;
  float* out = nullptr;
  size_t out_stride = 0;
};

// A causal depthwise conv with SiLU over consecutive tokens of one sequence,
// in place, on channels [0, channels) of what the pointers point at (the
// caller offsets them to its channel range). Per channel c and token t:
//   y = sum_j<K-1 taps[c][j] * window[j][c] + taps[c][K-1] * u;  window shifts in u;  u = silu(y)
// rows: token t's inputs at rows + t * row_stride; taps [channels][K] (the
// conv1d weights' layout); window: [K-1][window_stride], oldest first, read
// at the start and written back at the end. K <= 16.
struct ConvRun {
  float* rows = nullptr;
  size_t row_stride = 0;
  int tokens = 0;
  const float* taps = nullptr;
  int K = 0;
  float* window = nullptr;
  size_t window_stride = 0;
  int channels = 0;
};

struct LinearAttentionKernels {
  void (*delta_rule)(const DeltaRuleRun& run);
  void (*conv_silu)(const ConvRun& run);
  // x *= scale / sqrt(sum(x^2) + 1e-6), n floats (transformers' l2norm, eps inside the root).
  void (*l2_normalise)(float* x, int n, float scale);
  // o = rmsnorm(o) * weight * silu(z), n floats (the gated RMSNorm; weight applied as is, not 1 + w).
  void (*gated_rmsnorm)(float* o, const float* z, const float* weight, int n, float eps);
  const char* name;
};

// The kernels of this process's kernel set.
const LinearAttentionKernels& linear_attention_kernels();
// The kernels of a set; nullptr when this build or CPU cannot run it.
const LinearAttentionKernels* linear_attention_kernels_of(KernelSet set);

extern const LinearAttentionKernels kLinearAttentionBaseline;
extern const LinearAttentionKernels kLinearAttentionAvx2;
extern const LinearAttentionKernels kLinearAttentionAvx512;

}  // namespace weft
