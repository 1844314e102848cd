#include "kernels/activation/gelu.h"

#include <cmath>

namespace weft {

void gelu_erf(float* x, size_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752440f;
  for (size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

void gelu_tanh(float* x, size_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
  }
}

}  // namespace weft
