// LayerNorm over one row, as torch.nn.LayerNorm computes it: (x - mean) /
// sqrt(var + eps) * weight + bias, var the biased variance. The encoder's
// norm (encoder.cc); decoders use RMSNorm (model/layer_ops.h).
#pragma once

namespace weft {

// out and x may be the same row. Mean and variance are summed in double, in a
// fixed order, so a row's result does not depend on the batch it is in.
void layer_norm(float* out, const float* x, const float* weight, const float* bias, int n, float eps);

}  // namespace weft
