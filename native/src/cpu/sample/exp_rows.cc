// The scalar exp passes and the choice by kernel set (see exp_rows.h).
#include "sample/exp_rows.h"

#include <limits>

#include "base/cpu_features.h"
#include "sample/js_math.h"

namespace weft {

namespace {
double sum_exp_minus_scalar(const float* row, int32_t n, double max) {
  double sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += jsmath::exp(static_cast<double>(row[i]) - max);
  return sum;
}

int32_t collect_candidates_scalar(const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                                  SamplerScratch::Candidate* out) {
  int32_t count = 0;
  for (int32_t i = 0; i < n; ++i) {
    const double logit = row[i];
    if (logit < floor) continue;
    const double weight = jsmath::exp((logit - max) / temperature);
    if (weight < min_p) continue;
    out[count].weight = weight;
    out[count].id = i;
    ++count;
  }
  return count;
}
}  // namespace

bool exp_rows_simd() {
#if defined(WEFT_AVX2_KERNELS)
  static const bool simd = cpu_uses_avx2();
  return simd;
#else
  return false;
#endif
}

double row_max(bool simd, const float* row, int32_t n) {
#if defined(WEFT_AVX2_KERNELS)
  if (simd) return row_max_avx2(row, n);
#endif
  float max = -std::numeric_limits<float>::infinity();
  for (int32_t i = 0; i < n; ++i)
    if (row[i] > max) max = row[i];
  return max;
}

double sum_exp_minus(bool simd, const float* row, int32_t n, double max) {
#if defined(WEFT_AVX2_KERNELS)
  if (simd) return sum_exp_minus_avx2(row, n, max);
#endif
  return sum_exp_minus_scalar(row, n, max);
}

int32_t collect_candidates(bool simd, const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                           SamplerScratch::Candidate* out) {
#if defined(WEFT_AVX2_KERNELS)
  if (simd) return collect_candidates_avx2(row, n, max, temperature, floor, min_p, out);
#endif
  return collect_candidates_scalar(row, n, max, temperature, floor, min_p, out);
}

}  // namespace weft
