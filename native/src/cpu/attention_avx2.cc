// The attention kernel built for AVX2/FMA/F16C (see attention.h); called only
// after the run-time CPU check (cpu_features.h).
#if defined(WEFT_AVX2_KERNELS)
#include "attention_kernel.h"

namespace weft {

void attend_avx2(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                 float* scratch) {
  attend_impl(kv, layer, kv_head, table, rows, n_rows, scratch);
}

}  // namespace weft
#endif
