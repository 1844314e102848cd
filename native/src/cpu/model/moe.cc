// A mixture-of-experts layer over one step (see moe.h). Per token:
//
//   p = softmax(router(h))             [experts], h = norm(x)
//   top = the experts_per_token largest p (ties: the lower expert), and with
//         norm_topk_prob their p divided by their sum: the weights w
//   routed = sum over e in top, in expert order, of w_e * down_e(silu(gate_e h) * up_e h)
//   xb = routed + sigmoid(shared_expert_gate h) * shared_down(silu(shared_gate h) * shared_up h)
//
// The experts run one at a time over the tokens routed to them (gathered into
// contiguous rows, so each is one matmul per weight), and each token adds its
// experts' outputs in expert order: a token's result does not depend on which
// other tokens share the step.
#include "model/moe.h"

#include <cmath>
#include <cstring>

#include "kernels/activation/activation.h"
#include "model/layer_ops.h"

namespace weft {
namespace {

// Each token's chosen experts and weights, from its router logits (turned in place into probabilities).
void route(const ModelConfig& c, StepState& st) {
  const int E = c.experts, K = c.experts_per_token;
  for (int t = 0; t < st.T; ++t) {
    float* p = &st.router[static_cast<size_t>(t) * E];
    float max = p[0];
    for (int e = 1; e < E; ++e) max = std::max(max, p[e]);
    double sum = 0;
    for (int e = 0; e < E; ++e) sum += p[e] = std::exp(p[e] - max);
    for (int e = 0; e < E; ++e) p[e] = static_cast<float>(p[e] / sum);
    int32_t* chosen = &st.route_expert[static_cast<size_t>(t) * K];
    float* weight = &st.route_weight[static_cast<size_t>(t) * K];
    double chosen_sum = 0;
    for (int k = 0; k < K; ++k) {
      int best = -1;
      for (int e = 0; e < E; ++e) {
        bool taken = false;
        for (int j = 0; j < k; ++j) taken |= chosen[j] == e;
        if (!taken && (best < 0 || p[e] > p[best])) best = e;
      }
      chosen[k] = best;
      weight[k] = p[best];
      chosen_sum += p[best];
    }
    if (c.norm_topk_prob)
      for (int k = 0; k < K; ++k) weight[k] = static_cast<float>(weight[k] / chosen_sum);
  }
}

}  // namespace

void moe_block(Model& model, StepState& st, int layer) {
  const ModelConfig& c = model.config;
  const LayerWeights& l = model.weights.layers[layer];
  ThreadPool& pool = *model.pool;
  const int T = st.T, K = c.experts_per_token;
  const size_t H = c.hidden, I = c.expert_intermediate, S = c.shared_intermediate;
  add_and_norm(model, st, l.ffn_norm, true);

  // The router and the shared expert's first matmuls read the normalised input together.
  if (S > 0) {
    const MatmulPart first[] = {part(st.router.data(), l.router, nullptr), part(st.shared_gate.data(), l.shared_gate, nullptr),
                                part(st.shared_up.data(), l.shared_up, nullptr),
                                part(st.shared_scale.data(), l.shared_expert_gate, nullptr)};
    project(model, st, st.xb.data(), T, l.router, first);
  } else {
    const MatmulPart first[] = {part(st.router.data(), l.router, nullptr)};
    project(model, st, st.xb.data(), T, l.router, first);
  }
  route(c, st);

  std::fill(st.routed_sum.begin(), st.routed_sum.begin() + static_cast<size_t>(T) * H, 0.0f);
  for (int e = 0; e < c.experts; ++e) {
    int n = 0;
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < K; ++k)
        if (st.route_expert[static_cast<size_t>(t) * K + k] == e) {
          st.expert_rows[n] = t;
          st.expert_row_weight[n++] = st.route_weight[static_cast<size_t>(t) * K + k];
        }
    if (n == 0) continue;
    const ExpertWeights& x = l.experts[e];
    for (int i = 0; i < n; ++i) std::memcpy(&st.expert_io[i * H], &st.xb[st.expert_rows[i] * H], H * sizeof(float));
    const MatmulPart gate_up[] = {part(st.expert_gate.data(), x.w_gate, nullptr), part(st.expert_up.data(), x.w_up, nullptr)};
    project(model, st, st.expert_io.data(), n, x.w_gate, gate_up);
    silu_mul(st.expert_gate.data(), st.expert_up.data(), static_cast<size_t>(n) * I);
    const MatmulPart down[] = {part(st.expert_io.data(), x.w_down, nullptr)};  // its inputs are no longer needed
    project(model, st, st.expert_gate.data(), n, x.w_down, down);
    pool.parallel_for(n, st.token_grain, [&](size_t i0, size_t i1, int) {
      for (size_t i = i0; i < i1; ++i) {
        float* sum = &st.routed_sum[st.expert_rows[i] * H];
        const float* out = &st.expert_io[i * H];
        const float w = st.expert_row_weight[i];
        for (size_t j = 0; j < H; ++j) sum[j] += w * out[j];
      }
    });
  }

  if (S == 0) {
    std::memcpy(st.xb.data(), st.routed_sum.data(), static_cast<size_t>(T) * H * sizeof(float));
    return;
  }
  silu_mul(st.shared_gate.data(), st.shared_up.data(), static_cast<size_t>(T) * S);
  const MatmulPart down[] = {part(st.xb.data(), l.shared_down, nullptr)};  // every expert has read xb
  project(model, st, st.shared_gate.data(), T, l.shared_down, down);
  pool.parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      const float scale = 1.0f / (1.0f + std::exp(-st.shared_scale[t]));
      for (size_t j = 0; j < H; ++j) st.xb[t * H + j] = st.routed_sum[t * H + j] + scale * st.xb[t * H + j];
    }
  });
}

}  // namespace weft
