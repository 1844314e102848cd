// The attention tile kernel built for AVX2/FMA/F16C (see attention.h); called
// only after the run-time CPU check (cpu_features.h).
#if defined(WEFT_AVX2_KERNELS)
#include "base/vec16_avx2.h"
// (the Vec16 header first: attention_tile.h is written against it)
#include "kernels/attention/attention_tile.h"

namespace weft {

void attend_avx2(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                 float* scratch) {
  attend_tile(kv, layer, kv_head, table, rows, n_rows, scratch);
}

}  // namespace weft
#endif
