// GELU, the activation of BERT-family MLPs (encoder.cc), in the two forms
// transformers' configs name: "gelu" is the exact x * Phi(x) with erf;
// "gelu_new" / "gelu_pytorch_tanh" the tanh approximation. Scalar, with the C
// library's erf / tanh: gelu_erf is the baseline of the vector kernels
// (activation.h, gelu_erf_kernel), which an encoder's MLP runs; at batch 32 of
// 16-token texts the scalar erf took ~10% of a MiniLM step (perf).
#pragma once
#include <cstddef>

namespace weft {

// x[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2))), i < n.
void gelu_erf(float* x, size_t n);
// x[i] = 0.5 * x[i] * (1 + tanh(sqrt(2 / pi) * (x[i] + 0.044715 * x[i]^3))), i < n.
void gelu_tanh(float* x, size_t n);

}  // namespace weft
