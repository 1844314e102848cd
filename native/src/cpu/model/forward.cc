// The forward pass of a Llama-family decoder over a paged KV cache.
//
// One step runs T new tokens of B sequences together (prefill chunks and
// decode tokens mixed). Per layer:
//   x  += o_proj(attention(rope(q_proj(norm(x))), rope(k_proj(..)), v_proj(..)))
//   x  += down_proj(silu(gate_proj(norm(x))) * up_proj(norm(x)))
// and the LM head runs only for the rows in logits_indices. Hybrid models
// (Qwen3.5) replace the attention of their linear layers with a Gated DeltaNet
// (linear_attention.cc) and gate the attention output of the others:
//   x  += o_proj(attention(..) * sigmoid(gate)), gate from q_proj's rows.
// Mixture-of-experts layers (Qwen3-Next) replace the MLP with a router over
// experts and a gated shared expert (moe.cc).
//
// Attention reads every key and value, including the new tokens' own, from the
// cache after they are written to it. So a token's result depends only on its
// sequence's history, never on what else is in the batch, how the prompt was
// chunked or where the blocks lie: every dot product below is computed in the
// same order whatever the batch shape or thread count.
//
// The step was validated by validate_step() (step_check.cc): every token id,
// block index and cache slot used here is in range.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "base/half.h"
#include "kernels/activation/activation.h"
#include "kernels/attention/attention.h"
#include "kernels/float/sextets.h"
#include "kernels/matmul.h"
#include "kernels/quant/quant.h"
#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"
#include "model/encoder.h"
#include "model/layer_ops.h"
#include "model/linear_attention.h"
#include "model/model.h"
#include "model/moe.h"
#include "model/step_state.h"

namespace weft {
namespace {

// Steps of up to this many tokens prefetch their new cache rows (decode steps;
// a prefill's rows would be evicted again before they are written).
constexpr int kPrefetchedWriteTokens = 16;

// Fills the Model's StepState for this step (its buffers grown as needed, see step_state.h).
void prepare_step(StepState& st, const ModelConfig& c, const StepInput& s, int block_size, int threads) {
  const int T = st.T = static_cast<int>(s.input_ids.size());
  const int B = static_cast<int>(s.past_lens.size());
  const int H = c.hidden, hd = c.head_dim, half = c.rotary_dim / 2;
  const size_t q_dim = static_cast<size_t>(c.heads) * hd, kv_dim = static_cast<size_t>(c.kv_heads) * hd;

  grow(st.seq_of, T);
  grow(st.pos_in_cache, T);
  for (int i = 0; i < B; ++i)
    for (int t = s.subsequence_begins[i]; t < s.subsequence_begins[i + 1]; ++t) {
      st.seq_of[t] = i;
      st.pos_in_cache[t] = s.past_lens[i] + (t - s.subsequence_begins[i]);
    }

  // RoPE angles per token, from the explicit positions (HF computes them in float32).
  grow(st.cos, static_cast<size_t>(T) * half);
  grow(st.sin, static_cast<size_t>(T) * half);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < half; ++j) {
      const float angle = static_cast<float>(s.positions[t]) * static_cast<float>(c.inv_freq[j]);
      st.cos[static_cast<size_t>(t) * half + j] = std::cos(angle);
      st.sin[static_cast<size_t>(t) * half + j] = std::sin(angle);
    }

  st.tiles.clear();  // keeps its capacity
  for (int i = 0; i < B; ++i)
    for (int t0 = s.subsequence_begins[i]; t0 < s.subsequence_begins[i + 1]; t0 += kAttentionTile)
      for (int g = 0; g < c.kv_heads; ++g)
        st.tiles.push_back({i, t0, std::min(t0 + kAttentionTile, s.subsequence_begins[i + 1]), g});
  // Small attention work (tiny models, short contexts) runs on one thread.
  size_t attention_work = 0;
  for (int t = 0; t < T; ++t) attention_work += static_cast<size_t>(st.pos_in_cache[t] + 1) * c.heads * hd;
  st.tiles_per_chunk = attention_work < (1u << 16) ? st.tiles.size() : 1;
  st.max_rows = kAttentionTile * (c.heads / c.kv_heads);
  st.scratch_per_thread = 2 * static_cast<size_t>(block_size) * hd + block_size + static_cast<size_t>(st.max_rows) * (hd + 2);
  grow(st.scratch, st.scratch_per_thread * threads);
  grow(st.row_buf, static_cast<size_t>(st.max_rows) * threads);

  // Per-token loops go 4 tokens per chunk, or all inline when the step is small.
  st.token_grain = static_cast<size_t>(T) * (H + c.intermediate) < (1u << 14) ? T : 4;

  grow(st.x, static_cast<size_t>(T) * H);
  grow(st.xb, static_cast<size_t>(T) * H);
  grow(st.q, T * q_dim);
  grow(st.k, T * kv_dim);
  grow(st.v, T * kv_dim);
  grow(st.att, T * q_dim);
  grow(st.gate, static_cast<size_t>(T) * c.intermediate);
  grow(st.up, static_cast<size_t>(T) * c.intermediate);
  if (c.attn_output_gate) {
    grow(st.q_and_gate, 2 * T * q_dim);
    grow(st.att_gate, T * q_dim);
  }
  if (c.linear_layers() > 0) {
    const size_t value_total = c.lin_value_total();
    grow(st.lin_qkv, static_cast<size_t>(T) * c.conv_dim());
    grow(st.lin_z, T * value_total);
    grow(st.lin_b, static_cast<size_t>(T) * c.lin_value_heads);
    grow(st.lin_a, static_cast<size_t>(T) * c.lin_value_heads);
    grow(st.lin_out, T * value_total);
    if (c.fused_linear_proj) {
      grow(st.lin_qkvz, T * (c.conv_dim() + value_total));
      grow(st.lin_ba, static_cast<size_t>(T) * 2 * c.lin_value_heads);
    }
  }
  if (c.has_moe()) {
    const size_t topk = c.experts_per_token;
    grow(st.router, static_cast<size_t>(T) * c.experts);
    grow(st.route_expert, T * topk);
    grow(st.route_weight, T * topk);
    grow(st.shared_gate, static_cast<size_t>(T) * c.shared_intermediate);
    grow(st.shared_up, static_cast<size_t>(T) * c.shared_intermediate);
    grow(st.shared_scale, T);
    grow(st.routed_sum, static_cast<size_t>(T) * H);
    grow(st.expert_rows, T);
    grow(st.expert_row_weight, T);
    grow(st.expert_io, static_cast<size_t>(T) * H);
    grow(st.expert_gate, static_cast<size_t>(T) * c.expert_intermediate);
    grow(st.expert_up, static_cast<size_t>(T) * c.expert_intermediate);
  }
  grow(st.head_rows, s.logits_indices.size() * H);
}

// A hybrid model's states before the step (linear_state.h, L1 and L3): a
// sequence that starts here starts from zero, one resuming from a prefix hit
// from its checkpoint at pastLen; and which tokens end at a checkpoint boundary
// (their state is copied out as the layers run).
void prepare_linear_states(Model& model, const StepInput& s, StepState& st) {
  const int64_t every = model.checkpoint_interval;
  grow(st.checkpoint_at, st.T);
  std::fill(st.checkpoint_at.begin(), st.checkpoint_at.begin() + st.T, 0);
  for (size_t i = 0; i < s.past_lens.size(); ++i) {
    const int64_t past = s.past_lens[i];
    if (past == 0) model.linear.reset(s.state_slots[i]);
    else if (!s.from_checkpoint.empty() && s.from_checkpoint[i] != 0)
      model.linear.copy_from(model.checkpoints, s.checkpoint_indices[s.checkpoint_begins[i] + past / every - 1], s.state_slots[i]);
    if (model.checkpoints.num_slots == 0) continue;
    const int64_t context = past + s.subsequence_begins[i + 1] - s.subsequence_begins[i];
    for (int64_t j = past / every; j < context / every; ++j)
      st.checkpoint_at[s.subsequence_begins[i] + ((j + 1) * every - 1 - past)] = s.checkpoint_indices[s.checkpoint_begins[i] + j];
  }
}

// xb = o_proj(attention(rope(q), rope(k), v)) for one layer (times
// sigmoid(gate) with attn_output_gate), after adding the previous layer's
// output to x; writes the new tokens' keys and values into the cache first.
void attention_block(Model& model, const StepInput& s, StepState& st, int layer) {
  const ModelConfig& c = model.config;
  const LayerWeights& l = model.weights.layers[layer];
  KvCache& cache = model.cache;
  ThreadPool& pool = *model.pool;
  const int kv_layer = c.index_in_kind(layer);  // hybrid models keep KV rows for their attention layers only
  const int T = st.T, hd = c.head_dim, half = c.rotary_dim / 2;
  const int q_dim = c.heads * hd, kv_dim = c.kv_heads * hd;
  const int group = c.heads / c.kv_heads;  // query heads per kv head
  const size_t bs = cache.block_size;
  // Token t's cache block and slot.
  auto cache_slot = [&](int t) {
    const int64_t p = st.pos_in_cache[t];
    return std::pair<size_t, size_t>(s.block_indices[s.block_indices_begins[st.seq_of[t]] + p / bs], p % bs);
  };
  // A decode step's new cache rows, fetched for writing while q, k and v are
  // projected (each write waited on memory: ~3 us a layer at one token).
  if (T <= kPrefetchedWriteTokens)
    for (int t = 0; t < T; ++t) {
      const auto [block, slot] = cache_slot(t);
      for (int h = 0; h < c.kv_heads; ++h) cache.prefetch_row(kv_layer, 0, block, h, slot), cache.prefetch_row(kv_layer, 1, block, h, slot);
    }

  add_and_norm(model, st, l.attn_norm, layer > 0);
  float* q_rows = c.attn_output_gate ? st.q_and_gate.data() : st.q.data();
  const MatmulPart qkv[] = {part(q_rows, l.wq, &l.bq), part(st.k.data(), l.wk, &l.bk), part(st.v.data(), l.wv, &l.bv)};
  project(model, st, st.xb.data(), T, l.wq, qkv);

  // Per token: the gates split out of q (per head [query | gate]), q/k norm
  // (Qwen3), RoPE, then write k and v into the cache.
  pool.parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      const float* cs = &st.cos[t * half];
      const float* sn = &st.sin[t * half];
      if (c.attn_output_gate)
        for (int h = 0; h < c.heads; ++h) {
          const float* qg = &st.q_and_gate[(t * c.heads + h) * 2 * hd];
          std::memcpy(&st.q[t * q_dim + h * hd], qg, hd * sizeof(float));
          std::memcpy(&st.att_gate[t * q_dim + h * hd], qg + hd, hd * sizeof(float));
        }
      for (int h = 0; h < c.heads; ++h) {
        float* qh = &st.q[t * q_dim + h * hd];
        if (c.qk_norm) rmsnorm(qh, qh, l.q_norm.data.data(), hd, c.rms_eps);
        rope(qh, cs, sn, half);
      }
      const auto [block, slot] = cache_slot(t);
      for (int h = 0; h < c.kv_heads; ++h) {
        float* kh = &st.k[t * kv_dim + h * hd];
        if (c.qk_norm) rmsnorm(kh, kh, l.k_norm.data.data(), hd, c.rms_eps);
        rope(kh, cs, sn, half);
        cache.write_row(kv_layer, 0, block, h, slot, kh);
        cache.write_row(kv_layer, 1, block, h, slot, &st.v[t * kv_dim + h * hd]);
      }
    }
  });

  // Attention: causal over each sequence's cache up to and including the
  // token's own position (the last sliding_window positions, if set).
  const KvView kv = cache.view();
  const AttentionFn attend = attention_kernel();
  pool.parallel_for(st.tiles.size(), st.tiles_per_chunk, [&](size_t i0, size_t i1, int thread) {
    QueryRow* rows = &st.row_buf[static_cast<size_t>(thread) * st.max_rows];
    for (size_t item = i0; item < i1; ++item) {
      const AttentionTile& tile = st.tiles[item];
      int n = 0;
      for (int t = tile.t0; t < tile.t1; ++t) {
        const int64_t end = st.pos_in_cache[t] + 1;
        const int64_t begin = c.sliding_window > 0 ? std::max<int64_t>(0, end - c.sliding_window) : 0;
        for (int h = tile.kv_head * group; h < (tile.kv_head + 1) * group; ++h) {
          const size_t at = static_cast<size_t>(t) * q_dim + static_cast<size_t>(h) * hd;
          rows[n++] = {&st.q[at], &st.att[at], begin, end};
        }
      }
      attend(kv, kv_layer, tile.kv_head, &s.block_indices[s.block_indices_begins[tile.seq]], rows, n,
             &st.scratch[static_cast<size_t>(thread) * st.scratch_per_thread]);
    }
  });
  if (c.attn_output_gate)
    pool.parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
      for (size_t i = t0 * q_dim; i < t1 * q_dim; ++i) st.att[i] *= 1.0f / (1.0f + std::exp(-st.att_gate[i]));
    });

  const MatmulPart o[] = {part(st.xb.data(), l.wo, &l.bo)};
  project(model, st, st.att.data(), T, l.wo, o);
}

// xb = down_proj(silu(gate_proj(norm(x))) * up_proj(norm(x))), after adding
// the attention output (in xb) to the residual stream x.
void mlp_block(Model& model, StepState& st, int layer) {
  const ModelConfig& c = model.config;
  const LayerWeights& l = model.weights.layers[layer];
  ThreadPool& pool = *model.pool;
  const int T = st.T;
  add_and_norm(model, st, l.ffn_norm, true);
  const MatmulPart gate_up[] = {part(st.gate.data(), l.w_gate, nullptr), part(st.up.data(), l.w_up, nullptr)};
  project(model, st, st.xb.data(), T, l.w_gate, gate_up);
  const size_t I = c.intermediate;
  pool.parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
    silu_mul(&st.gate[t0 * I], &st.up[t0 * I], (t1 - t0) * I);  // silu(gate) * up, activation.h
  });
  const MatmulPart down[] = {part(st.xb.data(), l.w_down, nullptr)};
  project(model, st, st.gate.data(), T, l.w_down, down);
}

// Final norm and LM head, only for the rows whose logits are wanted, after
// adding the last layer's output (in xb) to those rows of x. Not inlined, so
// that profiles (bench/profile-step) can tell the LM head apart.
// The final hidden state (x + the last layer's output, then the final norm) of
// each token in hidden_indices, for embeddings; x is left as it is.
void final_hidden(Model& model, const StepInput& s, StepState& st, float* hidden) {
  const ModelConfig& c = model.config;
  const size_t H = c.hidden;
  std::vector<float>& row = st.hidden_row;
  grow(row, H);
  for (size_t e = 0; e < s.hidden_indices.size(); ++e) {
    const size_t t = static_cast<size_t>(s.hidden_indices[e]);
    for (size_t i = 0; i < H; ++i) row[i] = st.x[t * H + i] + st.xb[t * H + i];
    rmsnorm(hidden + e * H, row.data(), model.weights.final_norm.data.data(), static_cast<int>(H), c.rms_eps);
  }
}

__attribute__((noinline)) void lm_head(Model& model, const StepInput& s, StepState& st, float* logits) {
  const ModelConfig& c = model.config;
  const Weights& w = model.weights;
  const size_t H = c.hidden;
  const int R = static_cast<int>(s.logits_indices.size());
  if (R == 0) return;
  for (int r = 0; r < R; ++r) {
    const size_t t = static_cast<size_t>(s.logits_indices[r]);
    for (size_t i = 0; i < H; ++i) st.x[t * H + i] += st.xb[t * H + i];
    rmsnorm(&st.head_rows[r * H], &st.x[t * H], w.final_norm.data.data(), static_cast<int>(H), c.rms_eps);
  }
  const Tensor& head = c.tied_embeddings ? w.embed : w.lm_head;
  const MatmulPart out[] = {part(logits, head, nullptr)};
  project(model, st, st.head_rows.data(), R, head, out);
}

}  // namespace

// x[t] = the table row ids[t], widened from 16 bits or dequantized when stored so.
// The table may be copied or mapped (Tensor::raw()).
void embed_rows(const Tensor& table, const int32_t* ids, size_t n, int H, float* x, std::vector<uint8_t>& row) {
  // Row-grouped tables (Q8_0, Q4_0; never mapped): a token's row is unpacked back to GGUF bytes first.
  const void* raw = table.raw();
  if (is_row_grouped(table.type)) grow(row, quant_row_bytes(table.type, H));
  for (size_t t = 0; t < n; ++t) {
    const size_t from = static_cast<size_t>(ids[t]) * H;
    float* to = x + t * H;
    if (table.type == WeightType::F32) std::memcpy(to, static_cast<const float*>(raw) + from, H * sizeof(float));
    else if (is_row_grouped(table.type)) {
      unpack_row(table.type, static_cast<const uint8_t*>(raw), table.rows, H, ids[t], row.data());
      dequantize_row(table.type, row.data(), to, H);
    } else if (is_quantized(table.type))
      dequantize_row(table.type, static_cast<const uint8_t*>(raw) + static_cast<size_t>(ids[t]) * quant_row_bytes(table.type, H), to, H);
    else {
      // 16-bit, row-major or in sextets (sextets.h).
      const uint16_t* bits = static_cast<const uint16_t*>(raw);
      const bool f16 = table.type == WeightType::F16;
      for (int i = 0; i < H; ++i) {
        const uint16_t h = bits[table.sextets ? sextet_offset(ids[t], i, table.rows, H) : from + i];
        to[i] = f16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
    }
  }
}


void forward(Model& model, const StepInput& s, float* logits, float* hidden) {
  // Copy-on-write block copies come first: this step may read the copies.
  for (size_t k = 0; k + 1 < s.block_copies.size(); k += 2) model.cache.copy_block(s.block_copies[k], s.block_copies[k + 1]);
  StepState& st = model.step;
  prepare_step(st, model.config, s, model.cache.block_size, model.pool->size());
  if (model.config.encoder) return encoder_forward(model, s, st, hidden);  // encoder.cc
  embed_rows(model.weights.embed, s.input_ids.data(), s.input_ids.size(), model.config.hidden, st.x.data(), st.embed_row);
  if (model.config.linear_layers() > 0) prepare_linear_states(model, s, st);
  for (int layer = 0; layer < model.config.layers; ++layer) {
    if (model.config.is_linear(layer)) linear_attention_block(model, s, st, layer);
    else attention_block(model, s, st, layer);
    if (model.config.is_moe(layer)) moe_block(model, st, layer);
    else mlp_block(model, st, layer);
  }
  final_hidden(model, s, st, hidden);  // before the LM head, which adds the last output into x in place
  lm_head(model, s, st, logits);
}

}  // namespace weft
