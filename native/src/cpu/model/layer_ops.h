// What every kind of layer of forward() does the same way (forward.cc,
// linear_attention.cc): a projection of the step's rows through weight
// matrices, the RMSNorm, and a block's first pass (residual add, then norm).
#pragma once
#include <cmath>

#include "kernels/matmul.h"
#include "model/model.h"
#include "model/step_state.h"

namespace weft {

// out[T][w.rows] = in[T][w.cols] @ w^T (+ bias, when the model has that bias), as one part of a projection.
inline MatmulPart part(float* out, const Tensor& w, const Tensor* bias) {
  MatmulPart p;
  p.out = out;
  p.w = w.raw();
  p.type = w.type;
  p.bias = bias && bias->required ? bias->data.data() : nullptr;
  p.N = static_cast<int>(w.rows);
  p.sextets = w.sextets;
  p.group_tail = w.group_tail.empty() ? nullptr : w.group_tail.data();
  return p;
}

// Matrices sharing the input `in` (T rows of their common column count):
// one quantization of it and one thread-pool pass where the types allow
// (project(), matmul.h).
template <int Count>
inline void project(Model& model, StepState& st, const float* in, int T, const Tensor& first, const MatmulPart (&parts)[Count]) {
  weft::project(*model.pool, st.matmul, in, T, static_cast<int>(first.cols), parts, Count);
}

// x[t] = row ids[t] of an embedding table (any stored type: float, 16-bit,
// block formats), t < n; `row` is scratch for row-grouped tables. forward.cc.
void embed_rows(const Tensor& table, const int32_t* ids, size_t n, int H, float* x, std::vector<uint8_t>& row);

// Rotates the first 2 * half elements of one head in place, pairing element j
// with j + half (Hugging Face's rotate_half convention; half = rotary_dim / 2,
// the rest of the head passes through: partial RoPE).
inline void rope(float* v, const float* cos, const float* sin, int half) {
  for (int j = 0; j < half; ++j) {
    const float a = v[j], b = v[j + half];
    v[j] = a * cos[j] - b * sin[j];
    v[j + half] = b * cos[j] + a * sin[j];
  }
}

inline void rmsnorm(float* out, const float* x, const float* weight, int n, float eps) {
  // The sum of squares in double, as 8 interleaved partial sums: the adds do
  // not wait on one another (one chain of 1024 dependent adds was most of a
  // norm), and the order is fixed, so every batch shape gives the same bits.
  double part[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) part[k] += static_cast<double>(x[i + k]) * x[i + k];
  double sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(sum / n + eps));
  for (i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * scale);
}

// The first pass of a block: x += the previous block's output (in xb; none
// before the first layer), then xb = norm(x), token by token. (Adding here
// rather than right after the block's last matmul saves a pass; it is the
// same float addition.)
inline void add_and_norm(Model& model, StepState& st, const Tensor& norm, bool add_pending) {
  const ModelConfig& c = model.config;
  const size_t H = c.hidden;
  model.pool->parallel_for(st.T, st.token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      if (add_pending)
        for (size_t i = 0; i < H; ++i) st.x[t * H + i] += st.xb[t * H + i];
      rmsnorm(&st.xb[t * H], &st.x[t * H], norm.data.data(), static_cast<int>(H), c.rms_eps);
    }
  });
}

}  // namespace weft
