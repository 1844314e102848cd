#include "kernels/norm/layer_norm.h"

#include <cmath>

namespace weft {

void layer_norm(float* out, const float* x, const float* weight, const float* bias, int n, float eps) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / n;
  double squares = 0;
  for (int i = 0; i < n; ++i) {
    const double d = x[i] - mean;
    squares += d * d;
  }
  const double scale = 1.0 / std::sqrt(squares / n + eps);
  for (int i = 0; i < n; ++i) out[i] = static_cast<float>((x[i] - mean) * scale) * weight[i] + bias[i];
}

}  // namespace weft
