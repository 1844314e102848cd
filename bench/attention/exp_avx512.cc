// The tile kernel's vector exp, AVX-512 build, for the harness's accuracy check.
#include "../../native/src/cpu/attention_vec16_avx512.h"
#include "../../native/src/cpu/attention_exp.h"

namespace weft {
void exp16_avx512(const float* in, float* out) { vstore(out, exp_nonpositive(vload(in))); }
}  // namespace weft
