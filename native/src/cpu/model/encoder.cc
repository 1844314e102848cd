// The forward pass of a BERT-family encoder (BertModel: all-MiniLM, bge, e5,
// gte; NomicBertModel: nomic-embed), over the same step layout, KV cache and
// kernels as the decoder (forward.cc). T tokens of B sequences, H = hidden,
// I = intermediate:
//
//   x[T][H]  = LayerNorm(word[id] + token_type[type] + position[pos])
//   per layer (post-norm):
//     q, k, v [T][heads * head_dim] = x @ Wq|Wk|Wv^T + bias
//     att      = softmax(q k^T / sqrt(head_dim)) v  over every token of the sequence
//     x        = LayerNorm(x + att @ Wo^T + bo)                 (attention_layernorm)
//     h[T][I]  = gelu(x @ Wup^T + bup)
//     x        = LayerNorm(x + h @ Wdown^T + bdown)             (output_layernorm)
//   hidden rows = x at hidden_indices (no final norm beyond the last layer's)
//
// NomicBert (config.h: encoder_rope, gated_mlp, mlp_bias off): no position
// table, q and k rotated by RoPE instead (rotate_half, as the decoder's);
// h = silu(x @ Wgate^T) * (x @ Wup^T); no biases anywhere but the LayerNorms.
//
// Attention is bidirectional: a token attends to the whole sequence, the
// tokens after it included. So a sequence is computed whole, in one step
// (validate_step refuses an encoder step with a pastLen: the engine never
// splits an encoder request, src/engine/embedding.ts E3). The keys and values
// go through the paged cache only within the step: every token's k and v are
// written to its slot first, then the attention kernel reads [0, length) of
// the sequence, as the decoder's reads [0, position]; nothing there is read by
// a later step. That reuses the decoder's blocks, tiles and kernels as they
// are, and gives a token's result independent of what else is in the batch.
#include "model/encoder.h"

#include <algorithm>
#include <cstring>

#include "kernels/activation/activation.h"
#include "kernels/activation/gelu.h"
#include "kernels/attention/attention.h"
#include "kernels/norm/layer_norm.h"
#include "model/layer_ops.h"

namespace weft {
namespace {

// x = LayerNorm(word + token_type + position), in transformers' order of the sums.
void embeddings(Model& model, const StepInput& s, StepState& st) {
  const ModelConfig& c = model.config;
  const Weights& w = model.weights;
  const size_t T = st.T, H = c.hidden;
  embed_rows(w.embed, s.input_ids.data(), T, c.hidden, st.x.data(), st.embed_row);
  // Absent token types are all 0 (one text, as sentence-transformers encodes it).
  grow(st.type_ids, T);
  if (s.token_type_ids.empty()) std::fill(st.type_ids.begin(), st.type_ids.begin() + T, 0);
  else std::memcpy(st.type_ids.data(), s.token_type_ids.data(), T * sizeof(int32_t));
  embed_rows(w.token_types, st.type_ids.data(), T, c.hidden, st.xb.data(), st.embed_row);
  for (size_t i = 0; i < T * H; ++i) st.x[i] += st.xb[i];
  if (!c.encoder_rope) {
    embed_rows(w.positions, s.positions.data(), T, c.hidden, st.xb.data(), st.embed_row);
    for (size_t i = 0; i < T * H; ++i) st.x[i] += st.xb[i];
  }
  model.pool->parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t)
      layer_norm(&st.x[t * H], &st.x[t * H], w.embed_ln.data.data(), w.embed_ln_b.data.data(), c.hidden, c.layer_norm_eps);
  });
}

// x = LayerNorm(x + xb), token by token: a block's residual and post-norm.
void add_and_layer_norm(Model& model, StepState& st, const Tensor& weight, const Tensor& bias) {
  const ModelConfig& c = model.config;
  const size_t H = c.hidden;
  model.pool->parallel_for(st.T, st.token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      for (size_t i = 0; i < H; ++i) st.x[t * H + i] += st.xb[t * H + i];
      layer_norm(&st.x[t * H], &st.x[t * H], weight.data.data(), bias.data.data(), c.hidden, c.layer_norm_eps);
    }
  });
}

// xb = o_proj(attention(q, k, v)) over whole sequences; the keys and values
// written to the sequence's cache slots first.
void self_attention(Model& model, const StepInput& s, StepState& st, int layer) {
  const ModelConfig& c = model.config;
  const LayerWeights& l = model.weights.layers[layer];
  KvCache& cache = model.cache;
  const int T = st.T, hd = c.head_dim;
  const int q_dim = c.heads * hd, kv_dim = c.kv_heads * hd;
  const int group = c.heads / c.kv_heads;
  const size_t bs = cache.block_size;

  const MatmulPart qkv[] = {part(st.q.data(), l.wq, &l.bq), part(st.k.data(), l.wk, &l.bk), part(st.v.data(), l.wv, &l.bv)};
  project(model, st, st.x.data(), T, l.wq, qkv);
  const int half = c.rotary_dim / 2;
  model.pool->parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      if (c.encoder_rope) {
        const float* cs = &st.cos[t * half];
        const float* sn = &st.sin[t * half];
        for (int h = 0; h < c.heads; ++h) rope(&st.q[t * q_dim + h * hd], cs, sn, half);
        for (int h = 0; h < c.kv_heads; ++h) rope(&st.k[t * kv_dim + h * hd], cs, sn, half);
      }
      const int64_t p = st.pos_in_cache[t];
      const size_t block = s.block_indices[s.block_indices_begins[st.seq_of[t]] + p / bs], slot = p % bs;
      for (int h = 0; h < c.kv_heads; ++h) {
        cache.write_row(layer, 0, block, h, slot, &st.k[t * kv_dim + h * hd]);
        cache.write_row(layer, 1, block, h, slot, &st.v[t * kv_dim + h * hd]);
      }
    }
  });

  // Every query row of a sequence attends to all of its positions [0, length).
  const KvView kv = cache.view();
  const AttentionFn attend = attention_kernel();
  model.pool->parallel_for(st.tiles.size(), st.tiles_per_chunk, [&](size_t i0, size_t i1, int thread) {
    QueryRow* rows = &st.row_buf[static_cast<size_t>(thread) * st.max_rows];
    for (size_t item = i0; item < i1; ++item) {
      const AttentionTile& tile = st.tiles[item];
      const int64_t length = s.subsequence_begins[tile.seq + 1] - s.subsequence_begins[tile.seq];
      int n = 0;
      for (int t = tile.t0; t < tile.t1; ++t)
        for (int h = tile.kv_head * group; h < (tile.kv_head + 1) * group; ++h) {
          const size_t at = static_cast<size_t>(t) * q_dim + static_cast<size_t>(h) * hd;
          rows[n++] = {&st.q[at], &st.att[at], 0, length};
        }
      attend(kv, layer, tile.kv_head, &s.block_indices[s.block_indices_begins[tile.seq]], rows, n,
             &st.scratch[static_cast<size_t>(thread) * st.scratch_per_thread]);
    }
  });
  const MatmulPart o[] = {part(st.xb.data(), l.wo, &l.bo)};
  project(model, st, st.att.data(), T, l.wo, o);
}

// xb = down_proj(gelu(up_proj(x))), with their biases; or down_proj(silu(gate_proj(x)) * up_proj(x)).
void mlp(Model& model, StepState& st, int layer) {
  const ModelConfig& c = model.config;
  const LayerWeights& l = model.weights.layers[layer];
  const int T = st.T;
  const size_t I = c.intermediate;
  if (c.gated_mlp) {
    const MatmulPart gate_up[] = {part(st.gate.data(), l.w_gate, nullptr), part(st.up.data(), l.w_up, nullptr)};
    project(model, st, st.x.data(), T, l.w_gate, gate_up);
    model.pool->parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
      silu_mul(&st.gate[t0 * I], &st.up[t0 * I], (t1 - t0) * I);  // silu(gate) * up, activation.h
    });
    const MatmulPart down[] = {part(st.xb.data(), l.w_down, &l.b_down)};
    project(model, st, st.gate.data(), T, l.w_down, down);
    return;
  }
  const MatmulPart up[] = {part(st.up.data(), l.w_up, &l.b_up)};
  project(model, st, st.x.data(), T, l.w_up, up);
  const bool tanh_form = c.activation == ModelConfig::Activation::GeluTanh;
  const GeluFn gelu_erf_rows = gelu_erf_kernel();
  model.pool->parallel_for(T, st.token_grain, [&](size_t t0, size_t t1, int) {
    if (tanh_form) gelu_tanh(&st.up[t0 * I], (t1 - t0) * I);
    else gelu_erf_rows(&st.up[t0 * I], (t1 - t0) * I);
  });
  const MatmulPart down[] = {part(st.xb.data(), l.w_down, &l.b_down)};
  project(model, st, st.up.data(), T, l.w_down, down);
}

}  // namespace

void encoder_forward(Model& model, const StepInput& s, StepState& st, float* hidden) {
  embeddings(model, s, st);
  for (int layer = 0; layer < model.config.layers; ++layer) {
    const LayerWeights& l = model.weights.layers[layer];
    self_attention(model, s, st, layer);
    add_and_layer_norm(model, st, l.attn_ln, l.attn_ln_b);
    mlp(model, st, layer);
    add_and_layer_norm(model, st, l.out_ln, l.out_ln_b);
  }
  const size_t H = model.config.hidden;
  for (size_t e = 0; e < s.hidden_indices.size(); ++e)
    std::memcpy(hidden + e * H, &st.x[static_cast<size_t>(s.hidden_indices[e]) * H], H * sizeof(float));
}

}  // namespace weft
