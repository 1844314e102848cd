// A Gated DeltaNet layer over one step (see linear_attention.h and
// tools/hybrid/NOTES.md section 2). Per token of a sequence, in order:
//
//   u = in_proj_qkv(x)            [conv_dim]: q (Hk x Dk) | k (Hk x Dk) | v (Hv x Dv)
//                                 (Qwen3-Next: split out of in_proj_qkvz, with z; b and a
//                                 out of in_proj_ba)
//   y = silu(causal_conv(u))      depthwise, K taps; the window's older inputs come
//                                 from the sequence's conv state
//   q, k = l2norm(q), l2norm(k);  q /= sqrt(Dk)
//   beta = sigmoid(b), g = -exp(A_log) * softplus(a + dt_bias)   per value head
//   per value head h (key head h / r, r = Hv / Hk), with its state S [Dk][Dv]:
//     S *= exp(g);  delta = beta * (v - S^T k);  S += k (x) delta;  o = S^T q
//   o = rmsnorm(o) * norm * silu(z)   per value head
//   xb = out_proj(o)
//
// This is the recurrent form transformers uses for decode; it equals the
// chunked form it uses for prefill up to float rounding (reference.json's
// chunked_vs_recurrent: 6e-6 on the last position's logits after 300 tokens),
// and makes a token's result independent of how its prompt was split into
// steps. A sequence's tokens run in order; sequences and heads run in parallel.
// The per-token math runs in kernels/linear/gated_delta.h (vector kernels by
// kernel set, the portable scalar code as the baseline).
#include "model/linear_attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/linear/gated_delta.h"
#include "model/layer_ops.h"

namespace weft {
namespace {

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// torch.nn.functional.softplus (beta 1, threshold 20).
inline float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// Qwen3-Next's fused projections into the unfused layout: in_proj_qkvz's rows
// come per key head j as [q_j | k_j | v of its r value heads | z of them], and
// in_proj_ba's as [b of its r value heads | a of them] (tools/hybrid/NOTES.md
// section 2); the conv and the rest read q | k | v of all heads in order.
void split_fused_projections(const ModelConfig& c, StepState& st) {
  const int Hk = c.lin_key_heads, Hv = c.lin_value_heads, Dk = c.lin_key_dim, Dv = c.lin_value_dim;
  const int r = Hv / Hk;
  const size_t C = c.conv_dim(), key_total = c.lin_key_total(), value_total = c.lin_value_total();
  const size_t group = 2 * static_cast<size_t>(Dk) + 2 * static_cast<size_t>(r) * Dv, values = static_cast<size_t>(r) * Dv;
  for (int t = 0; t < st.T; ++t) {
    const float* qkvz = &st.lin_qkvz[t * (C + value_total)];
    const float* ba = &st.lin_ba[static_cast<size_t>(t) * 2 * Hv];
    float* qkv = &st.lin_qkv[t * C];
    for (int j = 0; j < Hk; ++j) {
      const float* from = qkvz + j * group;
      std::copy(from, from + Dk, qkv + j * Dk);
      std::copy(from + Dk, from + 2 * Dk, qkv + key_total + j * Dk);
      std::copy(from + 2 * Dk, from + 2 * Dk + values, qkv + 2 * key_total + j * values);
      std::copy(from + 2 * Dk + values, from + group, &st.lin_z[t * value_total + j * values]);
      std::copy(ba + 2 * j * r, ba + 2 * j * r + r, &st.lin_b[static_cast<size_t>(t) * Hv + j * r]);
      std::copy(ba + 2 * j * r + r, ba + 2 * (j + 1) * r, &st.lin_a[static_cast<size_t>(t) * Hv + j * r]);
    }
  }
}

}  // namespace

void linear_attention_block(Model& model, const StepInput& s, StepState& st, int layer) {
  const ModelConfig& c = model.config;
  const LayerWeights& l = model.weights.layers[layer];
  LinearState& state = model.linear;
  ThreadPool& pool = *model.pool;
  const int T = st.T;
  const int B = static_cast<int>(s.past_lens.size());
  const int li = c.index_in_kind(layer);
  const int Hk = c.lin_key_heads, Hv = c.lin_value_heads, Dk = c.lin_key_dim, Dv = c.lin_value_dim;
  const int r = Hv / Hk, K = c.conv_kernel;
  const size_t C = c.conv_dim(), key_total = c.lin_key_total(), value_total = c.lin_value_total();

  add_and_norm(model, st, l.attn_norm, layer > 0);
  if (c.fused_linear_proj) {
    const MatmulPart in[] = {part(st.lin_qkvz.data(), l.lin_qkvz, nullptr), part(st.lin_ba.data(), l.lin_ba, nullptr)};
    project(model, st, st.xb.data(), T, l.lin_qkvz, in);
    split_fused_projections(c, st);
  } else {
    const MatmulPart in[] = {part(st.lin_qkv.data(), l.lin_qkv, nullptr), part(st.lin_z.data(), l.lin_z, nullptr),
                             part(st.lin_b.data(), l.lin_b, nullptr), part(st.lin_a.data(), l.lin_a, nullptr)};
    project(model, st, st.xb.data(), T, l.lin_qkv, in);
  }

  // The step's tokens of sequence `seq` in runs that end at a checkpoint
  // (linear_state.h, L3) or at the sequence's last token: fn(first, count),
  // then whether the state after the run's last token is kept (its block or 0).
  // The kernels give the same bits whatever the runs (gated_delta.h), so
  // cutting at checkpoints changes nothing but where the copies are taken.
  auto for_each_run = [&](int seq, auto&& fn) {
    const int end = s.subsequence_begins[seq + 1];
    for (int t = s.subsequence_begins[seq]; t < end;) {
      int last = t;
      while (last + 1 < end && st.checkpoint_at[last] == 0) ++last;
      fn(t, last - t + 1, st.checkpoint_at[last]);
      t = last + 1;
    }
  };
  const LinearAttentionKernels& kernels = linear_attention_kernels();

  // Causal depthwise conv + SiLU, in place, 64 channels of one sequence per
  // item; the conv state keeps the last K-1 inputs for the next step.
  constexpr size_t kChannelsPerItem = 64;
  const size_t channel_items = (C + kChannelsPerItem - 1) / kChannelsPerItem;
  const float* taps = l.lin_conv.data.data();  // [C][K]
  pool.parallel_for(static_cast<size_t>(B) * channel_items, 1, [&](size_t i0, size_t i1, int) {
    for (size_t item = i0; item < i1; ++item) {
      const int seq = static_cast<int>(item / channel_items);
      const size_t c0 = (item % channel_items) * kChannelsPerItem, c1 = std::min(C, c0 + kChannelsPerItem);
      float* conv_state = state.conv(s.state_slots[seq], li);  // [K-1][C], oldest first
      for_each_run(seq, [&](int first, int count, int32_t checkpoint) {
        ConvRun run;
        run.rows = &st.lin_qkv[static_cast<size_t>(first) * C + c0];
        run.row_stride = C;
        run.tokens = count;
        run.taps = taps + c0 * K;
        run.K = K;
        run.window = conv_state + c0;
        run.window_stride = C;
        run.channels = static_cast<int>(c1 - c0);
        kernels.conv_silu(run);
        if (checkpoint != 0)
          for (int j = 0; j < K - 1; ++j)
            std::copy(conv_state + j * C + c0, conv_state + j * C + c1, model.checkpoints.conv(checkpoint, li) + j * C + c0);
      });
    }
  });

  // Per token: normalised q and k, beta and the log decay g.
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(Dk));
  pool.parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      float* y = &st.lin_qkv[t * C];
      for (int h = 0; h < Hk; ++h) {
        kernels.l2_normalise(y + h * Dk, Dk, q_scale);
        kernels.l2_normalise(y + key_total + h * Dk, Dk, 1.0f);
      }
      for (int h = 0; h < Hv; ++h) {
        float& b = st.lin_b[t * Hv + h];
        float& a = st.lin_a[t * Hv + h];
        b = sigmoid(b);
        a = -std::exp(l.lin_a_log.data[h]) * softplus(a + l.lin_dt_bias.data[h]);
      }
    }
  });

  // The delta rule per (sequence, value head), its tokens in order; then the
  // gated norm of each of its tokens' outputs.
  pool.parallel_for(static_cast<size_t>(B) * Hv, 1, [&](size_t i0, size_t i1, int) {
    for (size_t item = i0; item < i1; ++item) {
      const int seq = static_cast<int>(item / Hv), h = static_cast<int>(item % Hv);
      const size_t head_state = static_cast<size_t>(h) * Dk * Dv;
      float* S = state.delta(s.state_slots[seq], li) + head_state;  // [Dk][Dv]
      for_each_run(seq, [&](int first, int count, int32_t checkpoint) {
        const float* y = &st.lin_qkv[static_cast<size_t>(first) * C];
        DeltaRuleRun run;
        run.state = S;
        run.dk = Dk;
        run.dv = Dv;
        run.col_begin = 0;
        run.col_end = Dv;
        run.tokens = count;
        run.q = y + (h / r) * Dk;
        run.k = y + key_total + (h / r) * Dk;
        run.v = y + 2 * key_total + static_cast<size_t>(h) * Dv;
        run.qkv_stride = C;
        run.log_decay = &st.lin_a[static_cast<size_t>(first) * Hv + h];
        run.beta = &st.lin_b[static_cast<size_t>(first) * Hv + h];
        run.gate_stride = Hv;
        run.out = &st.lin_out[static_cast<size_t>(first) * value_total + static_cast<size_t>(h) * Dv];
        run.out_stride = value_total;
        kernels.delta_rule(run);
        if (checkpoint != 0) std::copy(S, S + static_cast<size_t>(Dk) * Dv, model.checkpoints.delta(checkpoint, li) + head_state);
      });
      for (int t = s.subsequence_begins[seq]; t < s.subsequence_begins[seq + 1]; ++t) {
        const size_t at = static_cast<size_t>(t) * value_total + static_cast<size_t>(h) * Dv;
        kernels.gated_rmsnorm(&st.lin_out[at], &st.lin_z[at], l.lin_norm.data.data(), Dv, c.rms_eps);
      }
    }
  });

  const MatmulPart out[] = {part(st.xb.data(), l.lin_out, nullptr)};
  project(model, st, st.lin_out.data(), T, l.lin_out, out);
}

}  // namespace weft
