// The two exp passes over a whole row the sampler makes (sampler.h), with
// fdlibm's exp (js_math.h) lane by lane: the same doubles as the scalar loop,
// four at a time where the CPU has AVX2 (exp_rows_avx2.cc; the lanes outside
// the main range, |x| >= 704, NaN or x == 1, take the scalar exp).
#pragma once
#include <cstdint>
#include <vector>

#include "sample/sampler.h"

namespace weft {

// Whether this process's kernel set runs the AVX2 passes (cpu_features.h).
bool exp_rows_simd();

// The largest of row[0..n) as the JS loop `if (row[i] > max) max = row[i]` from -Infinity finds it,
// for rows without NaN (the sampler calls it only there). Which of -0 and +0 a vector max keeps may
// differ from the scan; no later use tells them apart (max is only subtracted from, and added to a
// logarithm that is +0 only when -0 + 0 is +0 too).
double row_max(bool simd, const float* row, int32_t n);

// sum over i in order of exp(row[i] - max), in double (topLogprobs' sum).
// `simd` false: the scalar loop (every kernel set gives the same sum).
double sum_exp_minus(bool simd, const float* row, int32_t n, double max);

// draw()'s candidates: for i in order, row[i] not below `floor` and
// w = exp((row[i] - max) / temperature) not below min_p: out[count++] = {w, i}. Returns count.
int32_t collect_candidates(bool simd, const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                           SamplerScratch::Candidate* out);

#if defined(WEFT_AVX2_KERNELS)
float row_max_avx2(const float* row, int32_t n);
double sum_exp_minus_avx2(const float* row, int32_t n, double max);
int32_t collect_candidates_avx2(const float* row, int32_t n, double max, double temperature, double floor, double min_p,
                                SamplerScratch::Candidate* out);
// exp of n doubles (the AVX2 kernel, for the test hook).
void exp_avx2(const double* x, double* out, int32_t n);
#endif

}  // namespace weft
