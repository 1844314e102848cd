// The scalar row passes and the choice by kernel set (see exp_rows.h).
#include "sample/exp_rows.h"

#include <cmath>
#include <limits>

#include "base/cpu_features.h"
#include "sample/js_math.h"

namespace weft {

namespace {
float row_max_scalar(const float* row, int32_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int32_t i = 0; i < n; ++i)
    if (row[i] > max) max = row[i];
  return max;
}

double sum_exp_minus_scalar(const float* row, int32_t n, double max) {
  double sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += jsmath::exp(static_cast<double>(row[i]) - max);
  return sum;
}

int32_t collect_candidates_scalar(const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                                  SamplerScratch::Candidate* out, double* total) {
  double sum = 0;
  const int32_t count = collect_candidates_from(row, 0, n, max, temperature, floor, min_p, out, 0, &sum);
  *total = sum;
  return count;
}
}  // namespace

int32_t collect_candidates_from(const float* row, int32_t from, int32_t n, double max, double temperature, double floor,
                                double min_p, SamplerScratch::Candidate* out, int32_t count, double* sum) {
  for (int32_t i = from; i < n; ++i) {
    const double logit = row[i];
    if (logit < floor) continue;
    const double weight = jsmath::exp((logit - max) / temperature);
    if (weight < min_p) continue;
    out[count].weight = weight;
    out[count].id = i;
    ++count;
    *sum += weight;
  }
  return count;
}

SampleKernels sample_kernels() {
  static const SampleKernels kernels = [] {
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
    if (cpu_kernel_set() == KernelSet::Avx512Vnni) return SampleKernels::Avx512;
#endif
#if defined(WEFT_AVX2_KERNELS)
    if (cpu_uses_avx2()) return SampleKernels::Avx2;
#endif
    return SampleKernels::Scalar;
  }();
  return kernels;
}

bool sample_kernels_run(SampleKernels kernels) {
  switch (kernels) {
    case SampleKernels::Scalar:
      return true;
    case SampleKernels::Avx2:
#if defined(WEFT_AVX2_KERNELS)
      return cpu_supports(KernelSet::Avx2);
#else
      return false;
#endif
    case SampleKernels::Avx512:
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
      return cpu_supports(KernelSet::Avx512Vnni);
#else
      return false;
#endif
  }
  return false;
}

double row_max(SampleKernels kernels, const float* row, int32_t n) {
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
  if (kernels == SampleKernels::Avx512) return row_max_avx512(row, n);
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (kernels != SampleKernels::Scalar) return row_max_avx2(row, n);
#endif
  (void)kernels;
  return row_max_scalar(row, n);
}

bool finite_row_max(SampleKernels kernels, const float* row, int32_t n, double* max) {
  float m = 0;
  bool finite;
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
  if (kernels == SampleKernels::Avx512) {
    finite = finite_row_max_avx512(row, n, &m);
    *max = m;
    return finite;
  }
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (kernels != SampleKernels::Scalar) {
    finite = finite_row_max_avx2(row, n, &m);
    *max = m;
    return finite;
  }
#endif
  (void)kernels;
  finite = true;
  for (int32_t i = 0; i < n; ++i) finite &= std::isfinite(row[i]);
  if (finite) *max = row_max_scalar(row, n);
  return finite;
}

int32_t next_at_least(SampleKernels kernels, const float* row, int32_t from, int32_t n, float at_least) {
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
  if (kernels == SampleKernels::Avx512) return next_at_least_avx512(row, from, n, at_least);
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (kernels != SampleKernels::Scalar) return next_at_least_avx2(row, from, n, at_least);
#endif
  (void)kernels;
  int32_t i = from;
  while (i < n && row[i] < at_least) ++i;
  return i;
}

double sum_exp_minus(SampleKernels kernels, const float* row, int32_t n, double max) {
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
  if (kernels == SampleKernels::Avx512) return sum_exp_minus_avx512(row, n, max);
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (kernels != SampleKernels::Scalar) return sum_exp_minus_avx2(row, n, max);
#endif
  (void)kernels;
  return sum_exp_minus_scalar(row, n, max);
}

int32_t collect_candidates(SampleKernels kernels, const float* row, int32_t n, double max, double temperature, double floor,
                           double min_p, SamplerScratch::Candidate* out, double* total) {
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
  if (kernels == SampleKernels::Avx512) return collect_candidates_avx512(row, n, max, temperature, floor, min_p, out, total);
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (kernels != SampleKernels::Scalar) return collect_candidates_avx2(row, n, max, temperature, floor, min_p, out, total);
#endif
  (void)kernels;
  return collect_candidates_scalar(row, n, max, temperature, floor, min_p, out, total);
}

}  // namespace weft
