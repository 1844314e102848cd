// The AVX2 attention kernel as it was before the tile kernel: the scalar-exp
// online softmax of attention_kernel.h (still the baseline's code) built with
// the AVX2/FMA/F16C flags, as attention_avx2.cc built it. Bench only.
#include "../../native/src/cpu/kernels/attention/attention_kernel.h"

namespace weft {
void attend_old_avx2(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                     float* scratch) {
  attend_impl(kv, layer, kv_head, table, rows, n_rows, scratch);
}
}  // namespace weft
