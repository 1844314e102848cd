// Elementwise activations of the MLP, built like the attention kernels:
// baseline (activation.cc, the scalar formula with the C library's exp), AVX2
// (activation_avx2.cc) and AVX-512 (activation_avx512.cc), the last two the
// same vector code (activation_kernel.h) with the same bits; picked once by the
// process's kernel set (cpu_features.h).
#pragma once
#include <cstddef>

#include "base/cpu_features.h"

namespace weft {

// gate[i] = silu(gate[i]) * up[i] = gate[i] / (1 + e^-gate[i]) * up[i], i < n.
// Each element's result depends only on its own two inputs (not on n or on
// where the range starts), so any split of the work gives the same bits.
using SiluMulFn = void (*)(float* gate, const float* up, size_t n);

// The kernel of this process's kernel set.
SiluMulFn silu_mul_kernel();
// The kernel of a set; nullptr when this build or CPU cannot run it.
SiluMulFn silu_mul_kernel_of(KernelSet set);

inline void silu_mul(float* gate, const float* up, size_t n) { silu_mul_kernel()(gate, up, n); }

void silu_mul_baseline(float* gate, const float* up, size_t n);
void silu_mul_avx2(float* gate, const float* up, size_t n);
void silu_mul_avx512(float* gate, const float* up, size_t n);

// x[i] = 0.5 x[i] (1 + erf(x[i] / sqrt 2)), the exact GELU of BERT-family MLPs
// (encoder.cc), in place; element by element like silu_mul. The baseline is
// gelu.h's scalar form with the C library's erf; the vector kernels
// (activation_kernel.h) agree with it within 2e-7 absolute + 2e-7 relative,
// and with each other bit for bit.
using GeluFn = void (*)(float* x, size_t n);
GeluFn gelu_erf_kernel();
GeluFn gelu_erf_kernel_of(KernelSet set);
void gelu_erf_avx2(float* x, size_t n);
void gelu_erf_avx512(float* x, size_t n);

}  // namespace weft
