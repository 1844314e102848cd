// Quantized matmul: activation quantization, the baseline kernel (the
// reference order every kernel set keeps), the choice of kernel, and the row
// conversions (see quant.h).
#include "kernels/quant/quant.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/grow.h"
#include "kernels/quant/amx/quant_amx.h"
#include "kernels/quant/kquant/quant_k.h"
#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"

namespace weft {
namespace {

// Per 32-block: scale = max |x| / 127, q = x / scale rounded to nearest even.
void quantize_input(const float* x, int K, int8_t* q, float* scale, int32_t* sum) {
  for (int u = 0; u < K / kQuantUnit; ++u) {
    const float* v = x + u * kQuantUnit;
    float amax = 0;
    for (int i = 0; i < kQuantUnit; ++i) amax = std::max(amax, std::fabs(v[i]));
    const float s = amax / 127.0f;
    const float inv = s > 0 ? 1.0f / s : 0.0f;
    int32_t total = 0;
    for (int i = 0; i < kQuantUnit; ++i) {
      const float r = std::nearbyint(v[i] * inv);
      const int8_t qi = static_cast<int8_t>(std::max(-127.0f, std::min(127.0f, r)));
      q[u * kQuantUnit + i] = qi;
      total += qi;
    }
    scale[u] = s;
    sum[u] = total;
  }
}

// The per-row reference order (Q4_K, Q6_K; quant_kernels.h): for each unit u in turn, lane j (weights 4j..4j+3)
// adds (scale[j / 4] * x.scale) * exact_int_dot into the even or odd units'
// accumulator; finish_units adds the lanes and subtracts the mins.
void quant_rows_baseline(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const float* bias, int T,
                         int N, int K, size_t n0, size_t n1) {
  const int units = K / kQuantUnit;
  const size_t row_bytes = quant_row_bytes(type, K);
  std::vector<float> acc(static_cast<size_t>(T) * 18);  // per token: [2][8] lanes, 2 mins
  for (size_t n = n0; n < n1; ++n) {
    const uint8_t* row = w + n * row_bytes;
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int u = 0; u < units; ++u) {
      int8_t q[32];
      float ws[2], wmin;
      decode_unit(type, row, u, q, ws, &wmin);
      const int slot = u % 2;
      for (int t = 0; t < T; ++t) {
        const size_t at = static_cast<size_t>(t) * units + u;
        const int8_t* xq = x.q + at * kQuantUnit;
        float* a = &acc[static_cast<size_t>(t) * 18];
        for (int j = 0; j < 8; ++j) {
          int32_t p = 0;
          for (int i = 4 * j; i < 4 * j + 4; ++i) p += static_cast<int32_t>(q[i]) * xq[i];
          const float ls = ws[j / 4] * x.scale[at];
          a[slot * 8 + j] += ls * static_cast<float>(p);
        }
        if (type == WeightType::Q4_K) a[16 + slot] += (wmin * x.scale[at]) * static_cast<float>(x.sum[at]);
      }
    }
    for (int t = 0; t < T; ++t) {
      const float* a = &acc[static_cast<size_t>(t) * 18];
      float lanes[8];
      for (int j = 0; j < 8; ++j) lanes[j] = a[j] + a[8 + j];
      out[static_cast<size_t>(t) * N + n] = finish_units(lanes, a[16], a[17]) + (bias ? bias[n] : 0.0f);
    }
  }
}

// The row-group reference order (quant_group_kernels.h): per row and token,
// acc += (d * xs) * float(p) unit by unit, p the exact integer dot product of
// the unit, then + bias.
void quant_groups_baseline(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                           const float* bias, int T, int N, int K, size_t g0, size_t g1) {
  const int units = K / kQuantUnit;
  const size_t unit_bytes = group_unit_bytes(type);
  const size_t group_bytes = kGroupRows * quant_row_bytes(type, K);
  for (size_t gi = g0; gi < g1; ++gi) {
    const size_t n = gi * kGroupRows;
    const int rows = static_cast<int>(std::min<size_t>(kGroupRows, N - n));
    const uint8_t* g = rows == kGroupRows ? w + gi * group_bytes : tail;
    for (int t = 0; t < T; ++t) {
      for (int r = 0; r < rows; ++r) {
        float acc = 0;
        for (int u = 0; u < units; ++u) {
          const size_t at = static_cast<size_t>(t) * units + u;
          const int8_t* xq = x.q + at * kQuantUnit;
          const uint8_t* scales = g + u * (16 + unit_bytes);
          const uint8_t* wu = scales + 16;
          int32_t p = x.offset_sum[at];
          for (int i = 0; i < 32; ++i) {
            const int v = type == WeightType::Q8_0 ? wu[(i / 4) * 32 + r * 4 + i % 4]
                                                   : (wu[(i % 16 / 4) * 32 + r * 4 + i % 4] >> (i < 16 ? 0 : 4)) & 0x0f;
            p += v * xq[i];
          }
          const float d = f16_to_f32(read_u16(scales + r * 2));
          acc += (d * x.scale[at]) * static_cast<float>(p);
        }
        out[static_cast<size_t>(t) * N + n + r] = acc + (bias ? bias[n + r] : 0.0f);
      }
    }
  }
}

using QuantGroups = void (*)(WeightType, float*, const QuantizedInput&, const uint8_t*, const uint8_t*, const float*, int,
                             int, int, size_t, size_t);

QuantGroups group_kernel_of(KernelSet set) {
  switch (set) {
    case KernelSet::Baseline: return quant_groups_baseline;
#if defined(WEFT_AVX2_KERNELS)
    case KernelSet::Avx2: return quant_groups_avx2;
#endif
#if defined(WEFT_AVXVNNI_KERNELS)
    case KernelSet::AvxVnni: return quant_groups_avxvnni;
#endif
#if defined(WEFT_AVX512VNNI_KERNELS)
    case KernelSet::Avx512Vnni: return quant_groups_avx512vnni;
#endif
    default: return nullptr;
  }
}

using QuantRows = void (*)(WeightType, float*, const QuantizedInput&, const uint8_t*, const float*, int, int, int, size_t,
                           size_t);

// The kernel of a set, or nullptr when this build has none for it.
QuantRows kernel_of(KernelSet set) {
  switch (set) {
    case KernelSet::Baseline: return quant_rows_baseline;
#if defined(WEFT_AVX2_KERNELS)
    case KernelSet::Avx2: return quant_rows_avx2;
#endif
#if defined(WEFT_AVXVNNI_KERNELS)
    case KernelSet::AvxVnni: return quant_rows_avxvnni;
#endif
#if defined(WEFT_AVX512VNNI_KERNELS)
    case KernelSet::Avx512Vnni: return quant_rows_avx512vnni;
#endif
    default: return nullptr;
  }
}

// Quantizes T rows of K inputs into `a` (grown when too small, never shrunk)
// and returns the view the kernels read. Row-grouped weights of `type` also
// need - offset * sum per block (quant_repack.h).
QuantizedInput quantize_activations(KernelSet set, ThreadPool& pool, const float* in, WeightType type, int T, int K,
                                    MatmulScratch& a) {
  auto quantize = quantize_input;
#if defined(WEFT_AVX2_KERNELS)
  if (set != KernelSet::Baseline) quantize = quantize_input_avx2;
#endif
  const int units = K / kQuantUnit;
  const size_t blocks = static_cast<size_t>(T) * units;
  const bool grouped = is_q8_grouped(type);
  grow(a.q, static_cast<size_t>(T) * K);
  grow(a.scale, blocks);
  grow(a.sum, blocks);
  if (grouped) grow(a.offset_sum, blocks);
  const int offset = grouped ? group_offset(type) : 0;
  const size_t token_grain = static_cast<size_t>(T) * K < (1u << 15) ? T : 4;
  pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      quantize(in + t * K, K, &a.q[t * K], &a.scale[t * units], &a.sum[t * units]);
      if (grouped)
        for (int u = 0; u < units; ++u) a.offset_sum[t * units + u] = -offset * a.sum[t * units + u];
    }
  });
  return {a.q.data(), a.scale.data(), a.sum.data(), grouped ? a.offset_sum.data() : nullptr};
}

// Per-row kernels on GGUF rows (Q4_K, Q6_K; Q8_0/Q4_0 only for comparison).
void run_rows(KernelSet set, QuantRows kernel, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
              const float* bias, int T, int N, int K) {
  MatmulScratch a;
  const QuantizedInput x = quantize_activations(set, pool, in, WeightType::F32, T, K, a);
  // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
  const size_t row_bytes = quant_row_bytes(type, K);
  size_t grain = std::max<size_t>(1, 65536 / std::max<size_t>(1, row_bytes));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int) { kernel(type, out, x, w, bias, T, N, K, n0, n1); });
}

// Row-group kernels on row-grouped Q8_0 / Q4_0 (quant_repack.h), parts all of
// one type: the input quantized once, then one pass over every part's groups
// (chunks never straddle two parts; a group's outputs do not depend on the
// chunk that holds it).
void run_group_parts(KernelSet set, QuantGroups kernel, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T,
                     int K, const MatmulPart* parts, int count) {
  const WeightType type = parts[0].type;
  const QuantizedInput x = quantize_activations(set, pool, in, type, T, K, scratch);
  const size_t row_bytes = quant_row_bytes(type, K);
  // The N % 8 rows after a part's last whole group, as one more group: packed
  // at load for the model's matrices (MatmulPart::group_tail), here otherwise.
  const uint8_t* tails[kMaxMatmulParts];
  std::vector<uint8_t> packed[kMaxMatmulParts];
  size_t rows = 0, groups = 0;
  for (int p = 0; p < count; ++p) {
    const size_t N = static_cast<size_t>(parts[p].N), whole = N / kGroupRows;
    rows += N;
    groups += (N + kGroupRows - 1) / kGroupRows;
    tails[p] = parts[p].group_tail;
    if (N % kGroupRows != 0 && !tails[p]) {
      packed[p].resize(kGroupRows * row_bytes);
      const uint8_t* tail_rows[kGroupRows];
      const uint8_t* w = static_cast<const uint8_t*>(parts[p].w);
      for (size_t r = 0; r < N % kGroupRows; ++r) tail_rows[r] = w + (whole * kGroupRows + r) * row_bytes;
      pack_group(type, tail_rows, static_cast<int>(N % kGroupRows), K, packed[p].data());
      tails[p] = packed[p].data();
    }
  }
  // Groups of all parts in a row; a chunk may span the end of one part and the start of the next.
  size_t first_group[kMaxMatmulParts + 1] = {0};
  for (int p = 0; p < count; ++p) first_group[p + 1] = first_group[p] + (static_cast<size_t>(parts[p].N) + kGroupRows - 1) / kGroupRows;
  auto chunk = [&](size_t c0, size_t c1, int) {
    for (int p = 0; p < count; ++p) {
      const size_t from = std::max(c0, first_group[p]), to = std::min(c1, first_group[p + 1]);
      if (from < to)
        kernel(type, parts[p].out, x, static_cast<const uint8_t*>(parts[p].w), tails[p], parts[p].bias, T, parts[p].N, K,
               from - first_group[p], to - first_group[p]);
    }
  };
  // Below ~64K multiply-adds, waking other threads costs more than it saves.
  if (static_cast<size_t>(T) * rows * K < (1u << 16)) return chunk(0, groups, 0);
  const size_t group_bytes = kGroupRows * row_bytes;
#if defined(WEFT_AMX_KERNELS)
  const bool amx = kernel == quant_groups_amx;
#else
  const bool amx = false;
#endif
  if (T <= kGuidedTokens && !amx) {
    // Few tokens: guided chunks (at most ~512 KB of weights) cut the hand-offs.
    pool.parallel_for_guided(groups, std::max<size_t>(1, (size_t{512} << 10) / group_bytes), chunk);
  } else {
    // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
    size_t grain = std::max<size_t>(1, 65536 / group_bytes);
    grain = std::min(grain, std::max<size_t>(1, groups / (4 * static_cast<size_t>(pool.size()))));
    if (amx) grain += grain % 2;  // AMX tiles take groups in pairs (a part's groups start at its own 0)
    pool.parallel_for(groups, grain, chunk);
  }
}

// The parts of a projection, given the set for Q8_0/Q4_0 and the set for
// Q4_K/Q6_K; with `amx`, Q8_0 steps of kAmxMinTokens+ tokens take the AMX
// kernel (quant_amx.h; the same results).
bool project_parts(KernelSet group_set, KernelSet k_set, bool amx, ThreadPool& pool, MatmulScratch& scratch, const float* in,
                   int T, int K, const MatmulPart* parts, int count) {
  bool one_grouped_type = is_q8_grouped(parts[0].type);
  for (int p = 1; p < count; ++p) one_grouped_type = one_grouped_type && parts[p].type == parts[0].type;
  if (one_grouped_type) {
    QuantGroups kernel = group_kernel_of(group_set);
#if defined(WEFT_AMX_KERNELS)
    if (amx && parts[0].type == WeightType::Q8_0 && T >= kAmxMinTokens) kernel = quant_groups_amx;
#else
    (void)amx;
#endif
    if (!kernel) return false;
    run_group_parts(group_set, kernel, pool, scratch, in, T, K, parts, count);
    return true;
  }
  bool all_k_quant = true;
  for (int p = 0; p < count; ++p) all_k_quant = all_k_quant && is_k_quant(parts[p].type);
  if (all_k_quant) return kquant_project(k_set, pool, scratch, in, T, K, parts, count);
  // Both block families in one projection: each part on its own.
  for (int p = 0; p < count; ++p)
    if (!project_parts(group_set, k_set, amx, pool, scratch, in, T, K, &parts[p], 1)) return false;
  return true;
}

bool run_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
              const float* bias, int T, int N, int K) {
  if (is_q8_grouped(type)) {
    MatmulScratch scratch;
    MatmulPart part;
    part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
    return project_parts(set, set, false, pool, scratch, in, T, K, &part, 1);
  }
  const QuantRows kernel = kernel_of(set);
  if (!kernel) return false;
  run_rows(set, kernel, pool, out, in, w, type, bias, T, N, K);
  return true;
}

// The sets quant_matmul and quant_project use: the CPU's, or the baseline
// where this build has none for it.
KernelSet default_group_set() {
  static const KernelSet set = group_kernel_of(cpu_kernel_set()) && kernel_of(cpu_kernel_set()) ? cpu_kernel_set() : KernelSet::Baseline;
  return set;
}
KernelSet default_k_set() {
  static const KernelSet set = kquant_runs(cpu_kernel_set()) ? cpu_kernel_set() : KernelSet::Baseline;
  return set;
}
// Whether Q8_0 steps of kAmxMinTokens+ tokens take the AMX kernel (where the CPU and OS allow).
bool default_amx() {
#if defined(WEFT_AMX_KERNELS)
  static const bool amx = cpu_uses_amx();
  return amx;
#else
  return false;
#endif
}

}  // namespace

void quant_matmul(ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type, const float* bias, int T,
                  int N, int K) {
  MatmulScratch scratch;
  MatmulPart part;
  part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
  project_parts(default_group_set(), default_k_set(), default_amx(), pool, scratch, in, T, K, &part, 1);
}

void quant_project(ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K, const MatmulPart* parts, int count) {
  project_parts(default_group_set(), default_k_set(), default_amx(), pool, scratch, in, T, K, parts, count);
}

bool quant_project_with(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                        const MatmulPart* parts, int count) {
  if (!cpu_supports(set)) return false;
  return project_parts(set, set, false, pool, scratch, in, T, K, parts, count);
}

bool quant_matmul_amx_with(ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type, const float* bias,
                           int T, int N, int K) {
#if defined(WEFT_AMX_KERNELS)
  if (!cpu_amx_status().usable || type != WeightType::Q8_0) return false;
  MatmulScratch scratch;
  MatmulPart part;
  part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
  run_group_parts(KernelSet::Avx512Vnni, quant_groups_amx, pool, scratch, in, T, K, &part, 1);
  return true;
#else
  return false;
#endif
}

bool quant_matmul_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                       const float* bias, int T, int N, int K) {
  if (!cpu_supports(set)) return false;
  if (is_k_quant(type)) return kquant_matmul(set, pool, out, in, w, type, bias, T, N, K);
  return run_with(set, pool, out, in, w, type, bias, T, N, K);
}

bool quant_matmul_gguf_rows_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w,
                                 WeightType type, const float* bias, int T, int N, int K) {
  if (!cpu_supports(set)) return false;
  const QuantRows kernel = kernel_of(set);
  if (!kernel) return false;
  run_rows(set, kernel, pool, out, in, w, type, bias, T, N, K);
  return true;
}

void dequantize_row(WeightType type, const uint8_t* row, float* out, int64_t K) {
  for (int64_t u = 0; u < K / kQuantUnit; ++u) {
    int8_t q[32];
    float ws[2], wmin;
    decode_unit(type, row, static_cast<int>(u), q, ws, &wmin);
    for (int i = 0; i < 32; ++i) out[u * 32 + i] = ws[i / 16] * static_cast<float>(q[i]) - wmin;
  }
}

bool quantize_row(WeightType type, const float* x, uint8_t* out, int64_t K) {
  if (type != WeightType::Q8_0 && type != WeightType::Q4_0) return false;
  const BlockFormat f = block_format(type);
  for (int64_t b = 0; b < K / 32; ++b) {
    const float* v = x + b * 32;
    uint8_t* block = out + b * f.bytes;
    if (type == WeightType::Q8_0) {
      float amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(v[i]));
      const float d = amax / 127.0f;
      const float inv = d > 0 ? 1.0f / d : 0.0f;
      const uint16_t h = f32_to_f16(d);
      std::memcpy(block, &h, 2);
      for (int i = 0; i < 32; ++i)
        block[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(std::max(-127.0f, std::min(127.0f, std::nearbyint(v[i] * inv)))));
    } else {
      // The signed extreme maps to -8, so the range uses all 16 levels.
      float extreme = 0;
      for (int i = 0; i < 32; ++i)
        if (std::fabs(v[i]) > std::fabs(extreme)) extreme = v[i];
      const float d = extreme / -8.0f;
      const float inv = d != 0 ? 1.0f / d : 0.0f;
      const uint16_t h = f32_to_f16(d);
      std::memcpy(block, &h, 2);
      auto level = [&](float value) {
        return static_cast<uint8_t>(std::max(0.0f, std::min(15.0f, std::nearbyint(value * inv) + 8.0f)));
      };
      for (int i = 0; i < 16; ++i) block[2 + i] = static_cast<uint8_t>(level(v[i]) | (level(v[i + 16]) << 4));
    }
  }
  return true;
}

}  // namespace weft
