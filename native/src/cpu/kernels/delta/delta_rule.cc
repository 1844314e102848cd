// The baseline delta rule and the choice of kernel by kernel set.
#include "kernels/delta/delta_rule.h"

#include "kernels/delta/delta_rule_body.h"

namespace weft {

void delta_rule_baseline(float* S, const float* q, const float* k, const float* v, float decay, float beta, int Dk, int Dv, float* kv, float* o) {
  delta_rule_body(S, q, k, v, decay, beta, Dk, Dv, kv, o);
}

DeltaRuleFn delta_rule_kernel_of(KernelSet set) {
  if (!cpu_supports(set)) return nullptr;
  if (set == KernelSet::Baseline) return delta_rule_baseline;
#if defined(WEFT_AVX512_ATTENTION)
  if (set == KernelSet::Avx512Vnni) return delta_rule_avx512;
#endif
#if defined(WEFT_AVX2_KERNELS)
  return delta_rule_avx2;
#else
  return nullptr;
#endif
}

DeltaRuleFn delta_rule_kernel() {
  static const DeltaRuleFn kernel = delta_rule_kernel_of(cpu_kernel_set());
  return kernel ? kernel : delta_rule_baseline;
}

}  // namespace weft
