// Q4_K / Q6_K matmul: the activations' 256-block quantization, the baseline
// k-group kernel (the reference order of quant_k.h, which every kernel set
// keeps), the baseline GGUF-row kernel (kept for comparisons), the choice of
// kernel and the split over threads.
#include "kernels/quant/kquant/quant_k.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/grow.h"
#include "base/half.h"
#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"

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

// Quantizes T rows of K inputs per 256-block into `a` (grown when too small,
// never shrunk; MatmulScratch's invariant) and returns the view the kernels read.
KQuantInput quantize_activations_k(KernelSet set, ThreadPool& pool, const float* in, int T, int K, MatmulScratch& a) {
  auto quantize = quantize_input_k;
  (void)set;
#if defined(WEFT_AVX2_KERNELS)
  if (set != KernelSet::Baseline) quantize = quantize_input_k_avx2;
#endif
  const size_t blocks = static_cast<size_t>(T) * (K / kSuperBlock);
  grow(a.q, static_cast<size_t>(T) * K);
  grow(a.scale, blocks);
  grow(a.sum16, blocks * 16);
  grow(a.sum32, blocks * 8);
  grow(a.offset16, blocks * 16);
  const size_t per_token = K / kSuperBlock;
  const size_t token_grain = static_cast<size_t>(T) * K < (1u << 15) ? T : 4;
  pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t)
      quantize(in + t * K, K, &a.q[t * K], &a.scale[t * per_token], &a.sum16[t * per_token * 16], &a.sum32[t * per_token * 8],
               &a.offset16[t * per_token * 16]);
  });
  return {a.q.data(), a.scale.data(), a.sum16.data(), a.sum32.data(), a.offset16.data()};
}

}  // namespace

bool kquant_project(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                    const MatmulPart* parts, int count) {
  const KQuantGroups kernel = cpu_supports(set) ? group_kernel_of(set) : nullptr;
  if (!kernel) return false;
  for (int p = 0; p < count; ++p)
    if (!is_k_quant(parts[p].type)) return false;
  const KQuantInput x = quantize_activations_k(set, pool, in, T, K, scratch);
  // Groups of all parts in a row; a chunk may span the end of one part and the
  // start of the next (a group's outputs do not depend on the chunk that holds it).
  size_t first_group[kMaxMatmulParts + 1] = {0}, rows = 0, largest_group = 0;
  for (int p = 0; p < count; ++p) {
    first_group[p + 1] = first_group[p] + (static_cast<size_t>(parts[p].N) + kKGroupRows - 1) / kKGroupRows;
    rows += static_cast<size_t>(parts[p].N);
    largest_group = std::max(largest_group, static_cast<size_t>(K / kSuperBlock) * kgroup_block_bytes(parts[p].type));
  }
  const size_t groups = first_group[count];
  auto chunk = [&](size_t c0, size_t c1, int) {
    for (int p = 0; p < count; ++p) {
      const size_t from = std::max(c0, first_group[p]), to = std::min(c1, first_group[p + 1]);
      if (from < to)
        kernel(parts[p].type, parts[p].out, x, static_cast<const uint8_t*>(parts[p].w), parts[p].bias, T, parts[p].N, K,
               from - first_group[p], to - first_group[p]);
    }
  };
  // Below ~64K multiply-adds, waking other threads costs more than it saves.
  if (static_cast<size_t>(T) * rows * K < (1u << 16)) {
    chunk(0, groups, 0);
  } else if (T <= kGuidedTokens) {
    // Few tokens: guided chunks (at most ~512 KB of weights) cut the hand-offs.
    pool.parallel_for_guided(groups, std::max<size_t>(1, (size_t{512} << 10) / largest_group), chunk);
  } else {
    // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
    size_t grain = std::max<size_t>(1, 65536 / largest_group);
    grain = std::min(grain, std::max<size_t>(1, groups / (4 * static_cast<size_t>(pool.size()))));
    pool.parallel_for(groups, grain, chunk);
  }
  return true;
}

bool kquant_matmul(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                   const float* bias, int T, int N, int K) {
  MatmulScratch scratch;
  MatmulPart part;
  part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
  return kquant_project(set, pool, scratch, in, T, K, &part, 1);
}

bool kquant_matmul_gguf_rows(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w,
                             WeightType type, const float* bias, int T, int N, int K) {
  const KQuantRows kernel = is_k_quant(type) && cpu_supports(set) ? kernel_of(set) : nullptr;
  if (!kernel) return false;
  MatmulScratch scratch;
  const KQuantInput x = quantize_activations_k(KernelSet::Baseline, pool, in, T, K, scratch);  // the scalar quantizer too: all as it ran before
  const size_t row_bytes = quant_row_bytes(type, K);
  size_t grain = std::max<size_t>(1, 65536 / std::max<size_t>(1, row_bytes));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int) { kernel(type, out, x, w, bias, T, N, K, n0, n1); });
  return true;
}

}  // namespace weft
