// The vector Gated DeltaNet kernels built for AVX-512 F/BW/VL (see
// gated_delta.h); called only in the avx512vnni kernel set, after the
// run-time CPU check.
#if defined(WEFT_AVX512_ATTENTION)
#include "base/vec16_avx512.h"
// (the Vec16 header first: gated_delta_kernel.h is written against it)
#include "kernels/linear/gated_delta_kernel.h"

namespace weft {
const LinearAttentionKernels kLinearAttentionAvx512 = {delta_rule_vec, conv_silu_vec, l2_normalise_vec, gated_rmsnorm_vec, "avx512"};
}  // namespace weft
#endif
