// The vector exp (vec16_exp.h; exp_nonpositive is the same code below 0), AVX2 build, for the harness's accuracy check.
#include "../../native/src/cpu/base/vec16_avx2.h"
#include "../../native/src/cpu/base/vec16_exp.h"

namespace weft {
void exp16_avx2(const float* in, float* out) { vstore(out, exp_clamped(vload(in))); }
}  // namespace weft
