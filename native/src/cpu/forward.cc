// The forward pass of a Llama-family decoder over a paged KV cache.
//
// One step runs T new tokens of B sequences together (prefill chunks and
// decode tokens mixed). Per layer:
//   x  += o_proj(attention(rope(q_proj(norm(x))), rope(k_proj(..)), v_proj(..)))
//   x  += down_proj(silu(gate_proj(norm(x))) * up_proj(norm(x)))
// and the LM head runs only for the rows in logits_indices.
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

#include "attention.h"
#include "half.h"
#include "matmul.h"
#include "model.h"

namespace weft {
namespace {

// out[T][w.rows] = in[T][w.cols] @ w^T (+ bias, when the model has that bias).
void matmul(ThreadPool& pool, float* out, const float* in, const Tensor& w, const Tensor* bias, int T) {
  const float* b = bias && bias->required ? bias->data.data() : nullptr;
  weft::matmul(pool, out, in, w.raw(), w.type, b, T, static_cast<int>(w.rows), static_cast<int>(w.cols));
}

void rmsnorm(float* out, const float* x, const float* weight, int n, float eps) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(sum / n + eps));
  for (int i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * scale);
}

// Rotates one head in place, pairing element j with j + head_dim / 2 (Hugging
// Face's rotate_half convention).
void rope(float* v, const float* cos, const float* sin, int half) {
  for (int j = 0; j < half; ++j) {
    const float a = v[j], b = v[j + half];
    v[j] = a * cos[j] - b * sin[j];
    v[j + half] = b * cos[j] + a * sin[j];
  }
}

// Writes one cache row (one token, one kv head: n = head_dim values) in the
// cache's precision. `at` is a row start (cache_at() only returns row starts).
inline void store(KvCache& c, size_t at, const float* src, int n) {
  if (c.precision == KvPrecision::F32) {
    std::memcpy(&c.f32[at], src, n * sizeof(float));
  } else if (c.precision == KvPrecision::F16) {
    for (int i = 0; i < n; ++i) c.f16[at + i] = f32_to_f16(src[i]);
  } else {
    // Asymmetric 8-bit: the row's range [min, max] mapped onto 0..255.
    float lo = src[0], hi = src[0];
    for (int i = 1; i < n; ++i) lo = std::min(lo, src[i]), hi = std::max(hi, src[i]);
    const float scale = (hi - lo) / 255.0f;
    const float inv = scale > 0 ? 1.0f / scale : 0.0f;
    for (int i = 0; i < n; ++i) c.u8[at + i] = static_cast<uint8_t>(std::min(255.0f, std::nearbyint((src[i] - lo) * inv)));
    c.u8_params[at / n * 2] = scale;
    c.u8_params[at / n * 2 + 1] = lo;
  }
}

}  // namespace

void forward(Model& model, const StepInput& s, float* logits) {
  const ModelConfig& c = model.config;
  const Weights& w = model.weights;
  KvCache& cache = model.cache;
  ThreadPool& pool = *model.pool;
  const int T = static_cast<int>(s.input_ids.size());
  const int B = static_cast<int>(s.past_lens.size());
  const int H = c.hidden, hd = c.head_dim, half = hd / 2;
  const int q_dim = c.heads * hd, kv_dim = c.kv_heads * hd;
  const int group = c.heads / c.kv_heads;  // query heads per kv head
  const size_t bs = cache.block_size;

  // The cache's raw pointers and sizes: what the attention kernel reads, and
  // what cache_row_offset (attention.h, the one place the layout is computed) needs.
  KvView kv_view;
  kv_view.precision = cache.precision;
  kv_view.f32 = cache.f32.data();
  kv_view.f16 = cache.f16.data();
  kv_view.u8 = cache.u8.data();
  kv_view.u8_params = cache.u8_params.data();
  kv_view.num_blocks = cache.num_blocks;
  kv_view.block_size = cache.block_size;
  kv_view.kv_heads = c.kv_heads;
  kv_view.head_dim = c.head_dim;
  auto cache_at = [&](int layer, int kv, size_t block, int head, size_t slot) {
    return cache_row_offset(kv_view, layer, kv, block, head, slot);
  };

  // Copy-on-write block copies come first: this step may read the copies.
  const size_t block_elements = static_cast<size_t>(c.kv_heads) * bs * hd;
  for (size_t k = 0; k + 1 < s.block_copies.size(); k += 2) {
    for (int layer = 0; layer < c.layers; ++layer)
      for (int kv = 0; kv < 2; ++kv) {
        const size_t from = cache_at(layer, kv, s.block_copies[k], 0, 0), to = cache_at(layer, kv, s.block_copies[k + 1], 0, 0);
        if (cache.precision == KvPrecision::F32) {
          std::memmove(&cache.f32[to], &cache.f32[from], block_elements * 4);
        } else if (cache.precision == KvPrecision::F16) {
          std::memmove(&cache.f16[to], &cache.f16[from], block_elements * 2);
        } else {
          std::memmove(&cache.u8[to], &cache.u8[from], block_elements);
          std::memmove(&cache.u8_params[to / hd * 2], &cache.u8_params[from / hd * 2], block_elements / hd * 2 * sizeof(float));
        }
      }
  }

  // Per token: its sequence and its cache position (past + index within the step).
  std::vector<int> seq_of(T);
  std::vector<int64_t> pos_in_cache(T);
  for (int i = 0; i < B; ++i)
    for (int t = s.subsequence_begins[i]; t < s.subsequence_begins[i + 1]; ++t) {
      seq_of[t] = i;
      pos_in_cache[t] = s.past_lens[i] + (t - s.subsequence_begins[i]);
    }
  // Cache slot of cache position p of token t's sequence.
  auto slot_of = [&](int t, int64_t p) {
    const int32_t* table = &s.block_indices[s.block_indices_begins[seq_of[t]]];
    return std::pair<size_t, size_t>(table[p / bs], p % bs);
  };

  // RoPE angles per token, from the explicit positions (HF computes them in float32).
  std::vector<float> cos_table(static_cast<size_t>(T) * half), sin_table(static_cast<size_t>(T) * half);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < half; ++j) {
      const float angle = static_cast<float>(s.positions[t]) * static_cast<float>(c.inv_freq[j]);
      cos_table[static_cast<size_t>(t) * half + j] = std::cos(angle);
      sin_table[static_cast<size_t>(t) * half + j] = std::sin(angle);
    }

  std::vector<float> x(static_cast<size_t>(T) * H), xb(static_cast<size_t>(T) * H);
  std::vector<float> q(static_cast<size_t>(T) * q_dim), k(static_cast<size_t>(T) * kv_dim), v(static_cast<size_t>(T) * kv_dim);
  std::vector<float> att(static_cast<size_t>(T) * q_dim);
  std::vector<float> gate(static_cast<size_t>(T) * c.intermediate), up(static_cast<size_t>(T) * c.intermediate);
  // Attention work items: up to kTile consecutive new tokens of one sequence
  // with the query heads of one kv head.
  constexpr int kTile = 16;
  struct Tile {
    int seq, t0, t1, kv_head;
  };
  std::vector<Tile> tiles;
  for (int i = 0; i < B; ++i)
    for (int t0 = s.subsequence_begins[i]; t0 < s.subsequence_begins[i + 1]; t0 += kTile)
      for (int g = 0; g < c.kv_heads; ++g) tiles.push_back({i, t0, std::min(t0 + kTile, s.subsequence_begins[i + 1]), g});
  // Small attention work (tiny models, short contexts) runs on one thread.
  size_t attention_work = 0;
  for (int t = 0; t < T; ++t) attention_work += static_cast<size_t>(pos_in_cache[t] + 1) * c.heads * hd;
  const size_t tiles_per_chunk = attention_work < (1u << 16) ? tiles.size() : 1;
  const int max_rows = kTile * group;
  const AttentionFn attend = attention_kernel();
  const size_t scratch_per_thread = 2 * bs * hd + bs + static_cast<size_t>(max_rows) * (hd + 2);
  std::vector<float> scratch(scratch_per_thread * pool.size());
  std::vector<QueryRow> row_buf(static_cast<size_t>(max_rows) * pool.size());

  // Per-token loops go 4 tokens per chunk, or all inline when the step is small.
  const size_t token_grain = static_cast<size_t>(T) * (H + c.intermediate) < (1u << 14) ? T : 4;

  // Embedding rows, widened from 16 bits when stored so.
  for (int t = 0; t < T; ++t) {
    const size_t from = static_cast<size_t>(s.input_ids[t]) * H;
    float* to = &x[static_cast<size_t>(t) * H];
    if (w.embed.type == WeightType::F32) std::memcpy(to, &w.embed.data[from], H * sizeof(float));
    else if (w.embed.type == WeightType::F16) for (int i = 0; i < H; ++i) to[i] = f16_to_f32(w.embed.half[from + i]);
    else for (int i = 0; i < H; ++i) to[i] = bf16_to_f32(w.embed.half[from + i]);
  }

  for (int layer = 0; layer < c.layers; ++layer) {
    const LayerWeights& l = w.layers[layer];

    pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
      for (size_t t = t0; t < t1; ++t) rmsnorm(&xb[t * H], &x[t * H], l.attn_norm.data.data(), H, c.rms_eps);
    });
    matmul(pool, q.data(), xb.data(), l.wq, &l.bq, T);
    matmul(pool, k.data(), xb.data(), l.wk, &l.bk, T);
    matmul(pool, v.data(), xb.data(), l.wv, &l.bv, T);

    // Per token: q/k norm (Qwen3), RoPE, then write k and v into the cache.
    pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
      for (size_t t = t0; t < t1; ++t) {
        const float* cs = &cos_table[t * half];
        const float* sn = &sin_table[t * half];
        for (int h = 0; h < c.heads; ++h) {
          float* qh = &q[t * q_dim + h * hd];
          if (c.qk_norm) rmsnorm(qh, qh, l.q_norm.data.data(), hd, c.rms_eps);
          rope(qh, cs, sn, half);
        }
        const auto [block, slot] = slot_of(static_cast<int>(t), pos_in_cache[t]);
        for (int h = 0; h < c.kv_heads; ++h) {
          float* kh = &k[t * kv_dim + h * hd];
          if (c.qk_norm) rmsnorm(kh, kh, l.k_norm.data.data(), hd, c.rms_eps);
          rope(kh, cs, sn, half);
          store(cache, cache_at(layer, 0, block, h, slot), kh, hd);
          store(cache, cache_at(layer, 1, block, h, slot), &v[t * kv_dim + h * hd], hd);
        }
      }
    });

    // Attention: causal over each sequence's cache up to and including the
    // token's own position (the last sliding_window positions, if set).
    pool.parallel_for(tiles.size(), tiles_per_chunk, [&](size_t i0, size_t i1, int thread) {
      QueryRow* rows = &row_buf[static_cast<size_t>(thread) * max_rows];
      for (size_t item = i0; item < i1; ++item) {
        const Tile& tile = tiles[item];
        int n = 0;
        for (int t = tile.t0; t < tile.t1; ++t) {
          const int64_t end = pos_in_cache[t] + 1;
          const int64_t begin = c.sliding_window > 0 ? std::max<int64_t>(0, end - c.sliding_window) : 0;
          for (int h = tile.kv_head * group; h < (tile.kv_head + 1) * group; ++h) {
            const size_t at = static_cast<size_t>(t) * q_dim + static_cast<size_t>(h) * hd;
            rows[n++] = {&q[at], &att[at], begin, end};
          }
        }
        attend(kv_view, layer, tile.kv_head, &s.block_indices[s.block_indices_begins[tile.seq]], rows, n,
               &scratch[static_cast<size_t>(thread) * scratch_per_thread]);
      }
    });

    matmul(pool, xb.data(), att.data(), l.wo, &l.bo, T);

    // Residual, then the SwiGLU MLP on the normalised stream.
    pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
      for (size_t t = t0; t < t1; ++t) {
        for (int i = 0; i < H; ++i) x[t * H + i] += xb[t * H + i];
        rmsnorm(&xb[t * H], &x[t * H], l.ffn_norm.data.data(), H, c.rms_eps);
      }
    });
    matmul(pool, gate.data(), xb.data(), l.w_gate, nullptr, T);
    matmul(pool, up.data(), xb.data(), l.w_up, nullptr, T);
    const size_t I = c.intermediate;
    pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
      for (size_t i = t0 * I; i < t1 * I; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];  // silu(gate) * up
    });
    matmul(pool, xb.data(), gate.data(), l.w_down, nullptr, T);
    for (size_t i = 0; i < x.size(); ++i) x[i] += xb[i];
  }

  // Final norm and LM head, only for the rows whose logits are wanted.
  const int R = static_cast<int>(s.logits_indices.size());
  if (R == 0) return;
  std::vector<float> rows(static_cast<size_t>(R) * H);
  for (int r = 0; r < R; ++r)
    rmsnorm(&rows[static_cast<size_t>(r) * H], &x[static_cast<size_t>(s.logits_indices[r]) * H], w.final_norm.data.data(), H,
            c.rms_eps);
  matmul(pool, logits, rows.data(), c.tied_embeddings ? w.embed : w.lm_head, nullptr, R);
}

}  // namespace weft
