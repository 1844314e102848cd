// The whole-row passes the sampler makes (sampler.h), with fdlibm's exp
// (js_math.h) lane by lane: the same doubles as the scalar loop, four at a time
// where the CPU has AVX2 (exp_rows_avx2.cc), eight where the avx512vnni kernel
// set runs (exp_rows_avx512.cc; the lanes outside the main range, |x| >= 704,
// NaN or x == 1, take the scalar exp in both). Every set gives the scalar's bits.
#pragma once
#include <cstdint>
#include <vector>

#include "sample/sampler.h"

namespace weft {

// Which passes run. Each set gives the same results; only the speed differs.
enum class SampleKernels : uint8_t { Scalar, Avx2, Avx512 };

// This process's: Avx512 where the avx512vnni kernel set runs (it implies AVX-512 F/BW/VL,
// cpu_features.h), Avx2 for the other sets above baseline, else Scalar.
SampleKernels sample_kernels();

// Whether this CPU and build can run `kernels` (the test hooks run every supported set).
bool sample_kernels_run(SampleKernels kernels);

// The largest of row[0..n) as the JS loop `if (row[i] > max) max = row[i]` from -Infinity finds it,
// for rows without NaN (the sampler calls it only there). Which of -0 and +0 a vector max keeps may
// differ from the scan; no later use tells them apart (max is only subtracted from, and added to a
// logarithm that is +0 only when -0 + 0 is +0 too).
double row_max(SampleKernels kernels, const float* row, int32_t n);

// The row's check and max in one pass: false when row[0..n) holds a NaN or an infinity
// (then *max is unspecified), else true with *max = row_max(row).
bool finite_row_max(SampleKernels kernels, const float* row, int32_t n, double* max);

// The first i in [from, n) with row[i] >= at_least (n when none): the top-logprobs scan skips
// what cannot enter its list this way. For rows without NaN.
int32_t next_at_least(SampleKernels kernels, const float* row, int32_t from, int32_t n, float at_least);

// sum over i in order of exp(row[i] - max), in double (topLogprobs' sum).
double sum_exp_minus(SampleKernels kernels, const float* row, int32_t n, double max);

// draw()'s candidates: for i in order, row[i] not below `floor` and
// w = exp((row[i] - max) / temperature) not below min_p: out[count++] = {w, i}. Returns count;
// *total = the candidates' weights added in that order (draw()'s first total, when no top-k cuts them).
int32_t collect_candidates(SampleKernels kernels, const float* row, int32_t n, double max, double temperature, double floor,
                           double min_p, SamplerScratch::Candidate* out, double* total);

// The same for i in [from, n), appended at out[count] with the weights added to *sum in order;
// returns the new count. The scalar kernel, and the vector kernels' tails (compiled without any
// SIMD flags, so every build may call it).
int32_t collect_candidates_from(const float* row, int32_t from, int32_t n, double max, double temperature, double floor,
                                double min_p, SamplerScratch::Candidate* out, int32_t count, double* sum);

#if defined(WEFT_AVX2_KERNELS)
float row_max_avx2(const float* row, int32_t n);
bool finite_row_max_avx2(const float* row, int32_t n, float* max);
int32_t next_at_least_avx2(const float* row, int32_t from, int32_t n, float at_least);
double sum_exp_minus_avx2(const float* row, int32_t n, double max);
int32_t collect_candidates_avx2(const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                                SamplerScratch::Candidate* out, double* total);
// exp of n doubles (the AVX2 kernel, for the test hook).
void exp_avx2(const double* x, double* out, int32_t n);
#endif
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
float row_max_avx512(const float* row, int32_t n);
bool finite_row_max_avx512(const float* row, int32_t n, float* max);
int32_t next_at_least_avx512(const float* row, int32_t from, int32_t n, float at_least);
double sum_exp_minus_avx512(const float* row, int32_t n, double max);
int32_t collect_candidates_avx512(const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                                  SamplerScratch::Candidate* out, double* total);
void exp_avx512(const double* x, double* out, int32_t n);
#endif

}  // namespace weft
