// The delta rule built for AVX-512 (see delta_rule.h); called only after the run-time CPU check.
#if defined(WEFT_AVX512_ATTENTION)
#include "kernels/delta/delta_rule.h"
#include "kernels/delta/delta_rule_body.h"

namespace weft {
void delta_rule_avx512(float* S, const float* q, const float* k, const float* v, float decay, float beta, int Dk, int Dv, float* kv, float* o) {
  delta_rule_body(S, q, k, v, decay, beta, Dk, Dv, kv, o);
}
}  // namespace weft
#endif
