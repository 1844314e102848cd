// Matrix products for the forward pass: out[T][N] = in[T][K] @ w[N][K]^T (+ bias).
//
// Weights are PyTorch's [out, in] rows, so each output is a dot product of an
// input row and a weight row. Work is split over weight rows between threads;
// each thread keeps a tile of input rows in cache while its weight rows stream
// past, and computes small register tiles of outputs at a time.
#include "matmul.h"

#include <algorithm>
#include <cstring>

// Kernels get an AVX2/FMA clone on x86-64 Linux, picked at load time by the CPU
// (the default clone runs on any x86-64). Elsewhere plain -O3 vectorises them.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define WEFT_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define WEFT_KERNEL
#endif
// Helpers of the kernels must be inlined into each clone to run with its instructions.
#if defined(__GNUC__)
#define WEFT_INLINE inline __attribute__((always_inline))
#else
#define WEFT_INLINE inline
#endif

namespace weft {
namespace {

// Eight float lanes: a GCC/Clang vector (one AVX register, two SSE/NEON ones),
// or a plain struct elsewhere. Lane j accumulates the products at k = j mod 8.
#if defined(__GNUC__)
typedef float lanes8 __attribute__((vector_size(32)));
#else
struct lanes8 {
  float v[8];
  float operator[](int i) const { return v[i]; }
  lanes8 operator*(const lanes8& o) const { lanes8 r; for (int i = 0; i < 8; ++i) r.v[i] = v[i] * o.v[i]; return r; }
  lanes8& operator+=(const lanes8& o) { for (int i = 0; i < 8; ++i) v[i] += o.v[i]; return *this; }
};
#endif

WEFT_INLINE lanes8 load8(const float* p) {
  lanes8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Every output of the matmul is summed in this one order, whichever kernel
// computes it: lane j sums a[k] * b[k] for k = j, j + 8, ... below K rounded
// down to 8; the lanes are added pairwise; the tail k is added last, in order.
// That is what keeps logits bit-identical across batch shapes.
WEFT_INLINE float finish(const lanes8& acc, const float* a, const float* b, int k8, int K) {
  float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (int k = k8; k < K; ++k) sum += a[k] * b[k];
  return sum;
}

// A TB x RB tile: tokens x[0..TB) against weight rows w[0..RB), K columns each.
// out[t * out_stride + r] = dot(x_t, w_r) + bias[r]. The RB * TB accumulators
// stay in registers, so each loaded weight vector is used TB times.
template <int TB, int RB>
WEFT_INLINE void tile(const float* x, const float* w, int K, float* out, size_t out_stride, const float* bias) {
  lanes8 acc[TB][RB];
  for (int t = 0; t < TB; ++t)
    for (int r = 0; r < RB; ++r) acc[t][r] = lanes8{};
  const int k8 = K & ~7;
  for (int k = 0; k < k8; k += 8) {
    lanes8 wv[RB];
    for (int r = 0; r < RB; ++r) wv[r] = load8(w + static_cast<size_t>(r) * K + k);
    for (int t = 0; t < TB; ++t) {
      const lanes8 xv = load8(x + static_cast<size_t>(t) * K + k);
      for (int r = 0; r < RB; ++r) acc[t][r] += xv * wv[r];
    }
  }
  for (int t = 0; t < TB; ++t)
    for (int r = 0; r < RB; ++r)
      out[t * out_stride + r] = finish(acc[t][r], x + static_cast<size_t>(t) * K, w + static_cast<size_t>(r) * K, k8, K) +
                                (bias ? bias[r] : 0.0f);
}

// out[t][n] = dot(in[t], w[n]) + bias[n] for weight rows n in [n0, n1) and all
// T tokens. Tokens go in tiles of 16 so their inputs stay in cache while this
// thread's weight rows stream past. Inside: with 4+ tokens, 4 tokens x 3 rows
// at a time (12 accumulators + 3 weight vectors + 1 input = 16 AVX registers);
// with fewer (decode), 1 token x 8 rows, which keeps more memory reads in flight.
WEFT_KERNEL void matmul_rows(float* out, const float* in, const float* w, const float* bias, int T, int N, int K,
                             size_t n0, size_t n1) {
  auto at = [&](int t, size_t n) { return out + static_cast<size_t>(t) * N + n; };
  auto input = [&](int t) { return in + static_cast<size_t>(t) * K; };
  for (int t0 = 0; t0 < T; t0 += 16) {
    const int t1 = std::min(T, t0 + 16);
    size_t n = n0;
    if (t1 - t0 >= 4) {
      for (; n + 3 <= n1; n += 3) {
        const float* b = bias ? bias + n : nullptr;
        int t = t0;
        for (; t + 4 <= t1; t += 4) tile<4, 3>(input(t), w + n * K, K, at(t, n), N, b);
        for (; t < t1; ++t) tile<1, 3>(input(t), w + n * K, K, at(t, n), N, b);
      }
    } else {
      for (; n + 8 <= n1; n += 8)
        for (int t = t0; t < t1; ++t) tile<1, 8>(input(t), w + n * K, K, at(t, n), N, bias ? bias + n : nullptr);
    }
    for (; n < n1; ++n)
      for (int t = t0; t < t1; ++t) tile<1, 1>(input(t), w + n * K, K, at(t, n), N, bias ? bias + n : nullptr);
  }
}

}  // namespace

void matmul(ThreadPool& pool, float* out, const float* in, const float* w, const float* bias, int T, int N, int K) {
  // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
  size_t grain = std::max<size_t>(1, 16384 / std::max(1, K));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  grain = (grain + 23) / 24 * 24;  // whole 3- and 8-row tiles
  // Below ~64K multiply-adds, waking other threads costs more than it saves.
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int) { matmul_rows(out, in, w, bias, T, N, K, n0, n1); });
}

}  // namespace weft
