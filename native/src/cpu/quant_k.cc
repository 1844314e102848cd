// Q4_K / Q6_K matmul: the activations' 256-block quantization, the baseline
// kernel (the reference order of quant_k.h, which every kernel set keeps), the
// choice of kernel and the split over threads.
#include "quant_k.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "half.h"
#include "quant_formats.h"

namespace weft {
namespace {

// Per 256-block: d = max |x| / 127, q = x / d rounded to nearest even, and
// the sums of each 16 q (|sum| <= 16 * 127, an int16).
void quantize_input_k(const float* x, int K, int8_t* q, float* d, int16_t* sum16) {
  for (int b = 0; b < K / kSuperBlock; ++b) {
    const float* v = x + b * kSuperBlock;
    float amax = 0;
    for (int i = 0; i < kSuperBlock; ++i) amax = std::max(amax, std::fabs(v[i]));
    const float s = amax / 127.0f;
    const float inv = s > 0 ? 1.0f / s : 0.0f;
    for (int g = 0; g < kSuperBlock / 16; ++g) {
      int total = 0;
      for (int i = 16 * g; i < 16 * g + 16; ++i) {
        const float r = std::nearbyint(v[i] * inv);
        const int8_t qi = static_cast<int8_t>(std::max(-127.0f, std::min(127.0f, r)));
        q[b * kSuperBlock + i] = qi;
        total += qi;
      }
      sum16[b * 16 + g] = static_cast<int16_t>(total);
    }
    d[b] = s;
  }
}

// One super-block against one token's 256 activations: the lane sums of quant_k.h.
void q4k_block_lanes(const uint8_t* b, const int8_t* xq, const int16_t* xs16, int32_t isum[8], int32_t msum[8]) {
  uint8_t sc[8], m[8];
  q4k_unpack_scales(b + 4, sc, m);
  const uint8_t* qs = b + 16;
  for (int l = 0; l < 8; ++l) isum[l] = 0, msum[l] = m[l] * (xs16[2 * l] + xs16[2 * l + 1]);
  for (int j = 0; j < 8; ++j) {
    const uint8_t* nib = qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int l = 0; l < 8; ++l) {
      int32_t p = 0;
      for (int i = 4 * l; i < 4 * l + 4; ++i) p += ((nib[i] >> shift) & 15) * xq[32 * j + i];
      isum[l] += sc[j] * p;
    }
  }
}

void q6k_block_lanes(const uint8_t* b, const int8_t* xq, const int16_t* xs16, int32_t isum[8]) {
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  for (int l = 0; l < 8; ++l) isum[l] = -32 * (sc[2 * l] * xs16[2 * l] + sc[2 * l + 1] * xs16[2 * l + 1]);
  for (int j = 0; j < 8; ++j) {
    const int half = j / 4, quarter = j % 4;
    const uint8_t* ql = b + 64 * half + 32 * (quarter % 2);
    const uint8_t* qh = b + 128 + 32 * half;
    for (int l = 0; l < 8; ++l) {
      int32_t p = 0;
      for (int i = 4 * l; i < 4 * l + 4; ++i) {
        const int low = quarter >= 2 ? ql[i] >> 4 : ql[i] & 15;
        const int high = (qh[i] >> (2 * quarter)) & 3;
        p += (low | (high << 4)) * xq[32 * j + i];
      }
      isum[l] += sc[2 * j + l / 4] * p;
    }
  }
}

}  // namespace

void kquant_rows_baseline(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                          int N, int K, size_t n0, size_t n1) {
  const int blocks = K / kSuperBlock;
  const size_t row_bytes = quant_row_bytes(type, K);
  const BlockFormat f = block_format(type);
  for (size_t n = n0; n < n1; ++n) {
    const uint8_t* row = w + n * row_bytes;
    for (int t = 0; t < T; ++t) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int blk = 0; blk < blocks; ++blk) {
        const uint8_t* b = row + static_cast<size_t>(blk) * f.bytes;
        const size_t at = static_cast<size_t>(t) * blocks + blk;
        const int8_t* xq = x.q + at * kSuperBlock;
        const int16_t* xs16 = x.sum16 + at * 16;
        int32_t isum[8], msum[8];
        if (type == WeightType::Q4_K) {
          q4k_block_lanes(b, xq, xs16, isum, msum);
          const float fd = f16_to_f32(read_u16(b)) * x.d[at];
          const float fm = f16_to_f32(read_u16(b + 2)) * x.d[at];
          for (int l = 0; l < 8; ++l) acc[l] += fd * static_cast<float>(isum[l]) - fm * static_cast<float>(msum[l]);
        } else {
          q6k_block_lanes(b, xq, xs16, isum);
          const float fd = f16_to_f32(read_u16(b + 208)) * x.d[at];
          for (int l = 0; l < 8; ++l) acc[l] += fd * static_cast<float>(isum[l]);
        }
      }
      const float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      out[static_cast<size_t>(t) * N + n] = sum + (bias ? bias[n] : 0.0f);
    }
  }
}

namespace {

KQuantRows kernel_of(KernelSet set) {
  switch (set) {
    case KernelSet::Baseline: return kquant_rows_baseline;
#if defined(WEFT_AVX2_KERNELS)
    case KernelSet::Avx2: return kquant_rows_avx2;
#endif
#if defined(WEFT_AVXVNNI_KERNELS)
    case KernelSet::AvxVnni: return kquant_rows_avxvnni;
#endif
#if defined(WEFT_AVX512VNNI_KERNELS)
    case KernelSet::Avx512Vnni: return kquant_rows_avx512vnni;
#endif
    default: return nullptr;
  }
}

}  // namespace

bool kquant_runs(KernelSet set) { return cpu_supports(set) && kernel_of(set) != nullptr; }

bool kquant_matmul(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                   const float* bias, int T, int N, int K) {
  const KQuantRows kernel = is_k_quant(type) && cpu_supports(set) ? kernel_of(set) : nullptr;
  if (!kernel) return false;
  const int blocks = K / kSuperBlock;
  std::vector<int8_t> q(static_cast<size_t>(T) * K);
  std::vector<float> d(static_cast<size_t>(T) * blocks);
  std::vector<int16_t> sum16(static_cast<size_t>(T) * blocks * 16);
  const size_t token_grain = static_cast<size_t>(T) * K < (1u << 15) ? T : 4;
  pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t)
      quantize_input_k(in + t * K, K, &q[t * K], &d[t * blocks], &sum16[t * blocks * 16]);
  });
  const KQuantInput x{q.data(), d.data(), sum16.data()};
  // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
  const size_t row_bytes = quant_row_bytes(type, K);
  size_t grain = std::max<size_t>(1, 65536 / std::max<size_t>(1, row_bytes));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int) { kernel(type, out, x, w, bias, T, N, K, n0, n1); });
  return true;
}

}  // namespace weft
