// The vector attention kernel for a tile of query rows, included by
// attention_avx2.cc and attention_avx512.cc after their Vec16 header
// (vec16_*.h). Internal linkage, so each build keeps its own code.
//
// Per cache block, the keys and values are read (f16/u8 widened) once for all
// rows of the tile (a tile of a few rows reads f16 directly, kDirectF16Rows). Each row then walks the block in chunks of 16 positions
// (chunk edges at block offsets 0, 16, 32, ...): 16 scores at once (vdots16),
// positions outside the row's window masked to -inf, a vector exp, and an
// online-softmax update of the row's running max, sum and output.
//
// Invariant (forward.cc): a row's arithmetic depends only on its own query,
// its window and the absolute positions of blocks and chunks, never on the
// other rows of the tile, the tile's size or the thread; and both builds do
// the same operations in the same order (same bits).
#pragma once
#include <math.h>

#include <cstdint>

#include "base/vec16_exp.h"
#include "kernels/attention/attention_kernel.h"
#include "kernels/attention/query_row.h"

namespace weft {
namespace {

// Tiles of at most this many rows read an f16 cache directly (each row widens
// what it reads); larger ones widen each block once for all their rows.
// Widening is exact, so either way gives the same bits.
constexpr int kDirectF16Rows = 4;

// The widest head the tile kernel takes (its padded chunk lives on the stack: 16 KB of floats).
constexpr int kMaxTileHeadDim = 256;

// out[d0 .. d0 + NV*16) = out * correction + sum over i in [i0, i1) of
// weights[i] * values[i * hd + ..], in order of i.
template <int NV, typename T>
inline void accumulate_values(float* out, float correction, const float* weights, const T* values, int hd, int i0, int i1,
                              int d0) {
  Vec16 acc[NV];
  for (int j = 0; j < NV; ++j) acc[j] = vload(out + d0 + 16 * j);
  if (correction != 1.0f) {  // x * 1 == x: skipping it changes no bit
    const Vec16 c = vset1(correction);
    for (int j = 0; j < NV; ++j) acc[j] = vmul(acc[j], c);
  }
  for (int i = i0; i < i1; ++i) {
    const Vec16 w = vset1(weights[i]);
    const T* v = values + static_cast<size_t>(i) * hd + d0;
    for (int j = 0; j < NV; ++j) acc[j] = vfma(w, vload(v + 16 * j), acc[j]);
  }
  for (int j = 0; j < NV; ++j) vstore(out + d0 + 16 * j, acc[j]);
}

// accumulate_values for two rows with the same positions [i0, i1): each value
// load serves both (same bits as two calls).
template <int NV, typename T>
inline void accumulate_values_pair(float* out0, float* out1, float correction0, float correction1, const float* weights0,
                                   const float* weights1, const T* values, int hd, int i0, int i1, int d0) {
  Vec16 acc0[NV], acc1[NV];
  for (int j = 0; j < NV; ++j) acc0[j] = vload(out0 + d0 + 16 * j), acc1[j] = vload(out1 + d0 + 16 * j);
  if (correction0 != 1.0f) {
    const Vec16 c = vset1(correction0);
    for (int j = 0; j < NV; ++j) acc0[j] = vmul(acc0[j], c);
  }
  if (correction1 != 1.0f) {
    const Vec16 c = vset1(correction1);
    for (int j = 0; j < NV; ++j) acc1[j] = vmul(acc1[j], c);
  }
  for (int i = i0; i < i1; ++i) {
    const Vec16 w0 = vset1(weights0[i]), w1 = vset1(weights1[i]);
    const T* v = values + static_cast<size_t>(i) * hd + d0;
    for (int j = 0; j < NV; ++j) {
      const Vec16 x = vload(v + 16 * j);
      acc0[j] = vfma(w0, x, acc0[j]);
      acc1[j] = vfma(w1, x, acc1[j]);
    }
  }
  for (int j = 0; j < NV; ++j) vstore(out0 + d0 + 16 * j, acc0[j]), vstore(out1 + d0 + 16 * j, acc1[j]);
}

// The online-softmax step of one row for one chunk: from its masked scores,
// the new max and sum, the correction for what it had, and the weights.
inline float softmax_step(Vec16 scores, float* max, float* sum, float* weights) {
  const float old_max = *max, new_max = maxf(old_max, vhmax(scores));
  const float correction = expf(old_max - new_max);  // 0 on the row's first chunk
  const Vec16 w = exp_nonpositive(vadd(scores, vset1(-new_max)));
  vstore(weights, w);
  *sum = fmaf(*sum, correction, vhsum(w));  // one FMA in both builds
  *max = new_max;
  return correction;
}

// A row's running state: max and sum of its softmax so far, and its output
// (the weighted sum of values, not yet divided by the sum).
struct RowState {
  float* max;
  float* sum;
  float* acc;  // [n_rows][hd]
};

// One block (positions [p0, p0 + n)) for every row of the tile; keys and
// values are its n rows of hd values (f32 or f16).
// HD: head_dim known at compile time (0: hd as given), so that every key and
// value row's offset is an immediate and no row pointer has to be kept.
template <int HD, typename T>
inline void attend_block(const T* keys, const T* values, int64_t p0, int n, int hd_given, float scale, const QueryRow* rows,
                         int n_rows, const RowState& st) {
  const int hd = HD ? HD : hd_given;
  T pad[16 * kMaxTileHeadDim];  // 16 key rows for a chunk the block does not fill
  for (int c = 0; c < n; c += 16) {
    const int width = n - c < 16 ? n - c : 16;
    const int64_t c0 = p0 + c;
    const T* chunk_keys = keys + static_cast<size_t>(c) * hd;
    const T* chunk_values = values + static_cast<size_t>(c) * hd;
    if (width < 16) {  // zero rows after the last (their scores are masked)
      memcpy(pad, chunk_keys, sizeof(T) * width * hd);
      memset(pad + static_cast<size_t>(width) * hd, 0, sizeof(T) * (16 - width) * hd);
      chunk_keys = pad;
    }
    for (int r = 0; r < n_rows; ++r) {
      const int64_t a = max64(c0, rows[r].begin), e = min64(c0 + width, rows[r].end);
      if (a >= e) continue;  // this chunk is outside the row's window
      const int i0 = static_cast<int>(a - c0), i1 = static_cast<int>(e - c0);
      const Vec16 vscale = vset1(scale);
      float* out = st.acc + static_cast<size_t>(r) * hd;
      // The next row with the same positions in this chunk (mostly so in a
      // prefill tile, always in a decode one) shares the key and value loads.
      if (kPairRows && r + 1 < n_rows && max64(c0, rows[r + 1].begin) == a && min64(c0 + width, rows[r + 1].end) == e) {
        Vec16 dots0, dots1;
        vdots16_pair(rows[r].q, rows[r + 1].q, chunk_keys, hd, dots0, dots1);
        float weights0[16], weights1[16];
        const float c0w = softmax_step(vmask_outside(vmul(dots0, vscale), i0, i1), &st.max[r], &st.sum[r], weights0);
        const float c1w = softmax_step(vmask_outside(vmul(dots1, vscale), i0, i1), &st.max[r + 1], &st.sum[r + 1], weights1);
        float* out1 = out + hd;
        int d0 = 0;
        for (; d0 + 16 * kOutVectors <= hd; d0 += 16 * kOutVectors)
          accumulate_values_pair<kOutVectors>(out, out1, c0w, c1w, weights0, weights1, chunk_values, hd, i0, i1, d0);
        for (; d0 < hd; d0 += 16) accumulate_values_pair<1>(out, out1, c0w, c1w, weights0, weights1, chunk_values, hd, i0, i1, d0);
        ++r;
        continue;
      }
      float weights[16];
      const float correction = softmax_step(vmask_outside(vmul(vdots16(rows[r].q, chunk_keys, hd), vscale), i0, i1), &st.max[r],
                                            &st.sum[r], weights);
      int d0 = 0;
      for (; d0 + 16 * kOutVectors <= hd; d0 += 16 * kOutVectors)
        accumulate_values<kOutVectors>(out, correction, weights, chunk_values, hd, i0, i1, d0);
      for (; d0 < hd; d0 += 16) accumulate_values<1>(out, correction, weights, chunk_values, hd, i0, i1, d0);
    }
  }
}

inline void attend_tile(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                        float* scratch) {
  const int hd = kv.head_dim;
  // Tiny test models (head_dim 8) and heads wider than any model here use the portable kernel.
  if (hd % 16 != 0 || hd > kMaxTileHeadDim) return attend_impl(kv, layer, kv_head, table, rows, n_rows, scratch);
  const int64_t bs = kv.block_size;
  const float scale = 1.0f / sqrtf(static_cast<float>(hd));
  // Scratch as attention.h sizes it; the scores slot is not used here.
  float* key_buf = scratch;
  float* value_buf = key_buf + bs * hd;
  float* acc = value_buf + bs * hd + bs;
  const RowState st{acc + static_cast<size_t>(n_rows) * hd, acc + static_cast<size_t>(n_rows) * hd + n_rows, acc};
  int64_t lo = rows[0].begin, hi = rows[0].end;
  for (int r = 0; r < n_rows; ++r) {
    lo = min64(lo, rows[r].begin);
    hi = max64(hi, rows[r].end);
    st.max[r] = -INFINITY;
    st.sum[r] = 0;
  }
  for (size_t i = 0; i < static_cast<size_t>(n_rows) * hd; ++i) acc[i] = 0.0f;
  const bool direct_f16 = kv.precision == KvPrecision::F16 && n_rows <= kDirectF16Rows;

  for (int64_t b = lo / bs; b * bs < hi; ++b) {
    const int64_t p0 = b * bs;
    const int n = static_cast<int>(min64(p0 + bs, hi) - p0);
    const size_t k_at = cache_row_offset(kv, layer, 0, table[b], kv_head, 0), v_at = cache_row_offset(kv, layer, 1, table[b], kv_head, 0);
    if (direct_f16) {
      if (hd == 128) attend_block<128>(kv.f16 + k_at, kv.f16 + v_at, p0, n, hd, scale, rows, n_rows, st);
      else attend_block<0>(kv.f16 + k_at, kv.f16 + v_at, p0, n, hd, scale, rows, n_rows, st);
    } else {
      const float* keys = load_rows(kv, k_at, n, hd, key_buf);
      const float* values = load_rows(kv, v_at, n, hd, value_buf);
      if (hd == 128) attend_block<128>(keys, values, p0, n, hd, scale, rows, n_rows, st);
      else attend_block<0>(keys, values, p0, n, hd, scale, rows, n_rows, st);
    }
  }
  for (int r = 0; r < n_rows; ++r) {
    const float inv = 1.0f / st.sum[r];
    for (int d = 0; d < hd; ++d) rows[r].out[d] = acc[static_cast<size_t>(r) * hd + d] * inv;
  }
}

}  // namespace
}  // namespace weft
