// The vector Gated DeltaNet kernels built for AVX2/FMA (see gated_delta.h);
// called only after the run-time CPU check.
#if defined(WEFT_AVX2_KERNELS)
#include "base/vec16_avx2.h"
// (the Vec16 header first: gated_delta_kernel.h is written against it)
#include "kernels/linear/gated_delta_kernel.h"

namespace weft {
const LinearAttentionKernels kLinearAttentionAvx2 = {delta_rule_vec, conv_silu_vec, l2_normalise_vec, gated_rmsnorm_vec, "avx2"};
}  // namespace weft
#endif
