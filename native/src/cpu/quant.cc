// Quantized matmul: activation quantization, the baseline kernel (the
// reference order every kernel set keeps), the choice of kernel, and the row
// conversions (see quant.h).
#include "quant.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "quant_formats.h"
#include "quant_k.h"

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

// The reference order: for each unit u in turn, lane j (weights 4j..4j+3)
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

void run(QuantRows kernel, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type, const float* bias,
         int T, int N, int K) {
  const int units = K / kQuantUnit;
  std::vector<int8_t> q(static_cast<size_t>(T) * K);
  std::vector<float> scale(static_cast<size_t>(T) * units);
  std::vector<int32_t> sum(static_cast<size_t>(T) * units);
  const size_t token_grain = static_cast<size_t>(T) * K < (1u << 15) ? T : 4;
  pool.parallel_for(T, token_grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t)
      quantize_input(in + t * K, K, &q[t * K], &scale[t * units], &sum[t * units]);
  });
  const QuantizedInput x{q.data(), scale.data(), sum.data()};
  // ~64 KB of weights per chunk, and enough chunks to keep every thread busy.
  const size_t row_bytes = quant_row_bytes(type, K);
  size_t grain = std::max<size_t>(1, 65536 / std::max<size_t>(1, row_bytes));
  grain = std::min(grain, std::max<size_t>(1, N / (4 * static_cast<size_t>(pool.size()))));
  if (static_cast<size_t>(T) * N * K < (1u << 16)) grain = N;
  pool.parallel_for(N, grain, [&](size_t n0, size_t n1, int) { kernel(type, out, x, w, bias, T, N, K, n0, n1); });
}

}  // namespace

void quant_matmul(ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type, const float* bias, int T,
                  int N, int K) {
  // Q4_K and Q6_K have their own super-block kernels (quant_k.h).
  static const KernelSet k_set = kquant_runs(cpu_kernel_set()) ? cpu_kernel_set() : KernelSet::Baseline;
  if (is_k_quant(type)) {
    kquant_matmul(k_set, pool, out, in, w, type, bias, T, N, K);
    return;
  }
  static const QuantRows chosen = [] {
    const QuantRows k = kernel_of(cpu_kernel_set());
    return k ? k : quant_rows_baseline;
  }();
  run(chosen, pool, out, in, w, type, bias, T, N, K);
}

bool quant_matmul_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, WeightType type,
                       const float* bias, int T, int N, int K) {
  if (!cpu_supports(set)) return false;
  if (is_k_quant(type)) return kquant_matmul(set, pool, out, in, w, type, bias, T, N, K);
  const QuantRows kernel = kernel_of(set);
  if (!kernel) return false;
  run(kernel, pool, out, in, w, type, bias, T, N, K);
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
