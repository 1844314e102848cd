// The baseline attention kernel and the choice between it and the AVX2 one.
#include "attention.h"

#include "attention_kernel.h"
#include "cpu_features.h"

namespace weft {

void attend_baseline(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                     float* scratch) {
  attend_impl(kv, layer, kv_head, table, rows, n_rows, scratch);
}

AttentionFn attention_kernel() {
#if defined(WEFT_AVX2_KERNELS)
  if (cpu_uses_avx2()) return attend_avx2;
#endif
  return attend_baseline;
}

}  // namespace weft
