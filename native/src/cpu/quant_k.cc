// Q4_K / Q6_K matmul: the activations' 256-block quantization, the baseline
// k-group kernel (the reference order of quant_k.h, which every kernel set
// keeps), the baseline GGUF-row kernel (kept for comparisons), the choice of
// kernel and the split over threads.
#include "quant_k.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "half.h"
#include "quant_formats.h"
#include "quant_repack.h"

namespace weft {
namespace {

// Per 256-block: d = max |x| / 127, q = x / d rounded to nearest even, and
// the sums of each 16 q (|sum| <= 16 * 127, an int16), of each 32, and -32 *
// the sums of 16.
void quantize_input_k(const float* x, int K, int8_t* q, float* d, int16_t* sum16, int16_t* sum32, int32_t* offset16) {
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
      offset16[b * 16 + g] = -32 * total;
    }
    for (int j = 0; j < 8; ++j) sum32[b * 8 + j] = static_cast<int16_t>(sum16[b * 16 + 2 * j] + sum16[b * 16 + 2 * j + 1]);
    d[b] = s;
  }
}

// One GGUF super-block against one token's 256 activations: the lane sums of
// the GGUF-row order (quant_k_kernels.h).
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

void kquant_groups_baseline(WeightType type, float* out, const KQuantInput& x, const uint8_t* w, const float* bias, int T,
                            int N, int K, size_t g0, size_t g1) {
  const int blocks = K / kSuperBlock;
  const size_t block_bytes = kgroup_block_bytes(type);
  for (size_t gi = g0; gi < g1; ++gi) {
    const uint8_t* g = w + gi * blocks * block_bytes;
    const int rows = static_cast<int>(std::min<size_t>(kKGroupRows, N - gi * kKGroupRows));
    for (int t = 0; t < T; ++t)
      for (int r = 0; r < rows; ++r) {
        float acc = 0;
        for (int blk = 0; blk < blocks; ++blk) {
          const uint8_t* b = g + blk * block_bytes;
          const size_t at = static_cast<size_t>(t) * blocks + blk;
          const int8_t* xq = x.q + at * kSuperBlock;
          int32_t isum = 0;
          if (type == WeightType::Q4_K) {
            int32_t msum = 0;
            for (int j = 0; j < 8; ++j) {
              const uint8_t* q = b + 320 + 512 * (j / 2);  // unit j: nibble j % 2 of unit pair j / 2
              int32_t p = 0;
              for (int i = 0; i < 32; ++i) p += ((q[64 * (i / 4) + 4 * r + i % 4] >> (4 * (j % 2))) & 15) * xq[32 * j + i];
              isum += b[64 + 16 * j + r] * p;
              msum += b[192 + 32 * (j / 2) + 2 * r + j % 2] * x.sum32[at * 8 + j];
            }
            const float fd = f16_to_f32(read_u16(b + 2 * r)) * x.d[at];
            const float fm = f16_to_f32(read_u16(b + 32 + 2 * r)) * x.d[at];
            acc += fd * static_cast<float>(isum) - fm * static_cast<float>(msum);
          } else {
            for (int j = 0; j < 16; ++j) {
              const uint8_t* v = b + 288 + 192 * j + 4 * r;
              int32_t p = 0;
              for (int i = 0; i < 4; ++i) {
                const int top = (v[i] >> 6) | ((v[64 + i] >> 6) << 2) | ((v[128 + i] >> 6) << 4);
                p += ((v[i] & 63) - 32) * xq[16 * j + i] + ((v[64 + i] & 63) - 32) * xq[16 * j + 4 + i] +
                     ((v[128 + i] & 63) - 32) * xq[16 * j + 8 + i] + (top - 32) * xq[16 * j + 12 + i];
              }
              isum += static_cast<int8_t>(b[32 + 16 * j + r]) * p;
            }
            acc += (f16_to_f32(read_u16(b + 2 * r)) * x.d[at]) * static_cast<float>(isum);
          }
        }
        out[static_cast<size_t>(t) * N + gi * kKGroupRows + r] = acc + (bias ? bias[gi * kKGroupRows + r] : 0.0f);
      }
  }
}

namespace {

KQuantGroups group_kernel_of(KernelSet set) {
  switch (set) {
    case KernelSet::Baseline: return kquant_groups_baseline;
#if defined(WEFT_AVX2_KERNELS)
    case KernelSet::Avx2: return kquant_groups_avx2;
#endif
#if defined(WEFT_AVXVNNI_KERNELS)
    case KernelSet::AvxVnni: return kquant_groups_avxvnni;
#endif
#if defined(WEFT_AVX512VNNI_KERNELS)
    case KernelSet::Avx512Vnni: return kquant_groups_avx512vnni;
#endif
    default: return nullptr;
  }
}

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

bool kquant_runs(KernelSet set) { return cpu_supports(set) && kernel_of(set) != nullptr && group_kernel_of(set) != nullptr; }

namespace {

// The activations of one matmul, quantized per 256-block.
struct KActivations {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int16_t> sum16, sum32;
  std::vector<int32_t> offset16;
  KQuantInput view() const { return {q.data(), d.data(), sum16.data(), sum32.data(), offset16.data()}; }
};

void quantize_activations_k(KernelSet set, ThreadPool& pool, const float* in, int T, int K, KActivations& a) {
  auto quantize = quantize_input_k;
  (void)set;
#if defined(WEFT_AVX2_KERNELS)
  if (set != KernelSet::Baseline) quantize = quantize_input_k_avx2;
#endif
  const int blocks = K / kSuperBlock;
  a.q.resize(static_cast<size_t>(T) * K);
  a.d.resize(static_cast<size_t>(T) * blocks);
  a.sum16.resize(static_cast<size_t>(T) * blocks * 16);
  a.sum32.resize(static_cast<size_t>(T) * blocks * 8);
  a.offset16.resize(a.sum16.size());
  const size_t token_grain = static_cast<size_t>(T) * K < (1u << 15) ? T : 4;
  pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t)
      quantize(in + t * K, K, &a.q[t * K], &a.d[t * blocks], &a.sum16[t * blocks * 16], &a.sum32[t * blocks * 8],
                       &a.offset16[t * blocks * 16]);
  });
}

}  // namespace

bool kquant_matmul(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                   const float* bias, int T, int N, int K) {
  const KQuantGroups kernel = is_k_quant(type) && cpu_supports(set) ? group_kernel_of(set) : nullptr;
  if (!kernel) return false;
  KActivations a;
  quantize_activations_k(set, pool, in, T, K, a);
  const KQuantInput x = a.view();
  // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
  const size_t groups = (static_cast<size_t>(N) + kKGroupRows - 1) / kKGroupRows;
  const size_t group_bytes = static_cast<size_t>(K / kSuperBlock) * kgroup_block_bytes(type);
  size_t grain = std::max<size_t>(1, 65536 / group_bytes);
  grain = std::min(grain, std::max<size_t>(1, groups / (4 * static_cast<size_t>(pool.size()))));
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = groups;
  pool.parallel_for(groups, grain, [&](size_t g0, size_t g1, int) { kernel(type, out, x, w, bias, T, N, K, g0, g1); });
  return true;
}

bool kquant_matmul_gguf_rows(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w,
                             WeightType type, const float* bias, int T, int N, int K) {
  const KQuantRows kernel = is_k_quant(type) && cpu_supports(set) ? kernel_of(set) : nullptr;
  if (!kernel) return false;
  KActivations a;
  quantize_activations_k(KernelSet::Baseline, pool, in, T, K, a);  // the scalar quantizer too: all as it ran before
  const KQuantInput x = a.view();
  const size_t row_bytes = quant_row_bytes(type, K);
  size_t grain = std::max<size_t>(1, 65536 / std::max<size_t>(1, row_bytes));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int) { kernel(type, out, x, w, bias, T, N, K, n0, n1); });
  return true;
}

}  // namespace weft
