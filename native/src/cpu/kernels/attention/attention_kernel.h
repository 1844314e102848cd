// The attention kernel body, included by attention.cc (baseline) and
// attention_avx2.cc (AVX2/FMA/F16C). Internal linkage and no std:: templates,
// so each build keeps its own code (see matmul_kernels.h).
#pragma once
#include <math.h>
#include <cstdint>
#include <cstring>

#include "base/half.h"
#include "kernels/attention/query_row.h"
#if defined(__F16C__) && defined(__AVX2__)
#include <immintrin.h>
#endif

namespace weft {
namespace {

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
inline float maxf(float a, float b) { return a > b ? a : b; }

// Sum of a[i] * b[i] with 16 independent partial sums (vectorisable, fixed order).
inline float dot(const float* a, const float* b, int n) {
  float acc[16] = {0};
  int i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) acc[j] += a[i + j] * b[i + j];
  for (int j = 0; j < 8; ++j) acc[j] += acc[j + 8];
  float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// `rows` consecutive cached rows of n values from row start `at`, as floats:
// the cache itself (f32) or `tmp` (f16/u8, converted).
inline const float* load_rows(const KvView& kv, size_t at, int rows, int n, float* tmp) {
  if (kv.precision == KvPrecision::F32) return kv.f32 + at;
  const size_t count = static_cast<size_t>(rows) * n;
  if (kv.precision == KvPrecision::F16) {
    size_t i = 0;
#if defined(__F16C__) && defined(__AVX2__)
    for (; i + 8 <= count; i += 8)
      _mm256_storeu_ps(tmp + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kv.f16 + at + i))));
#endif
    for (; i < count; ++i) tmp[i] = f16_to_f32(kv.f16[at + i]);
  } else {
    for (int r = 0; r < rows; ++r) {
      const size_t row = at / n + r;
      const float scale = kv.u8_params[row * 2], lo = kv.u8_params[row * 2 + 1];
      for (int i = 0; i < n; ++i) tmp[static_cast<size_t>(r) * n + i] = lo + kv.u8[row * n + i] * scale;
    }
  }
  return tmp;
}

// The sequence's cache is visited one block at a time with an online softmax:
// each block's keys and values are read (and converted) once for all rows.
// Each row's arithmetic depends only on its own positions and the block
// boundaries, which are fixed by absolute position, so a row gets the same
// result in any tile, batch or thread.
inline void attend_impl(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                        float* scratch) {
  const int hd = kv.head_dim;
  const int64_t bs = kv.block_size;
  const float scale = 1.0f / sqrtf(static_cast<float>(hd));
  float* key_buf = scratch;
  float* value_buf = key_buf + bs * hd;
  float* scores = value_buf + bs * hd;
  float* acc = scores + bs;  // [n_rows][hd] running sum of weight * value
  float* running_max = acc + static_cast<size_t>(n_rows) * hd;
  float* running_sum = running_max + n_rows;
  int64_t lo = rows[0].begin, hi = rows[0].end;
  for (int r = 0; r < n_rows; ++r) {
    lo = min64(lo, rows[r].begin);
    hi = max64(hi, rows[r].end);
    running_max[r] = -INFINITY;
    running_sum[r] = 0;
  }
  for (size_t i = 0; i < static_cast<size_t>(n_rows) * hd; ++i) acc[i] = 0.0f;

  for (int64_t b = lo / bs; b * bs < hi; ++b) {
    const int64_t p0 = b * bs, p1 = min64(p0 + bs, hi);
    const int n = static_cast<int>(p1 - p0);
    const float* keys = load_rows(kv, cache_row_offset(kv, layer, 0, table[b], kv_head, 0), n, hd, key_buf);
    const float* values = load_rows(kv, cache_row_offset(kv, layer, 1, table[b], kv_head, 0), n, hd, value_buf);
    for (int r = 0; r < n_rows; ++r) {
      const int64_t a = max64(p0, rows[r].begin), e = min64(p1, rows[r].end);
      if (a >= e) continue;  // this block is outside the row's window
      float block_max = -INFINITY;
      for (int64_t p = a; p < e; ++p) {
        scores[p - a] = dot(rows[r].q, keys + (p - p0) * hd, hd) * scale;
        block_max = maxf(block_max, scores[p - a]);
      }
      const float new_max = maxf(running_max[r], block_max);
      const float correction = expf(running_max[r] - new_max);  // 0 on the row's first block
      float* out = acc + static_cast<size_t>(r) * hd;
      float sum = running_sum[r] * correction;
      for (int d = 0; d < hd; ++d) out[d] *= correction;
      for (int64_t p = a; p < e; ++p) {
        const float weight = expf(scores[p - a] - new_max);
        sum += weight;
        const float* v = values + (p - p0) * hd;
        for (int d = 0; d < hd; ++d) out[d] += weight * v[d];
      }
      running_sum[r] = sum;
      running_max[r] = new_max;
    }
  }
  for (int r = 0; r < n_rows; ++r) {
    const float inv = 1.0f / running_sum[r];
    for (int d = 0; d < hd; ++d) rows[r].out[d] = acc[static_cast<size_t>(r) * hd + d] * inv;
  }
}

}  // namespace
}  // namespace weft
