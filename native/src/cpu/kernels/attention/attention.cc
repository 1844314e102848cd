// The baseline attention kernel and the choice of kernel by kernel set.
#include "kernels/attention/attention.h"

#include "kernels/attention/attention_kernel.h"

namespace weft {

void attend_baseline(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                     float* scratch) {
  attend_impl(kv, layer, kv_head, table, rows, n_rows, scratch);
}

AttentionFn attention_kernel_of(KernelSet set) {
  if (!cpu_supports(set)) return nullptr;
  if (set == KernelSet::Baseline) return attend_baseline;
#if defined(WEFT_AVX512_ATTENTION)
  if (set == KernelSet::Avx512Vnni) return attend_avx512;
#endif
#if defined(WEFT_AVX2_KERNELS)
  return attend_avx2;
#else
  return nullptr;
#endif
}

AttentionFn attention_kernel() {
  static const AttentionFn kernel = attention_kernel_of(cpu_kernel_set());
  return kernel ? kernel : attend_baseline;
}

}  // namespace weft
