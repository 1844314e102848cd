// The attention tile kernel built for AVX-512 F/BW/VL (see attention.h);
// called only in the avx512vnni kernel set, after the run-time CPU check.
#if defined(WEFT_AVX512_ATTENTION)
#include "base/vec16_avx512.h"
// (the Vec16 header first: attention_tile.h is written against it)
#include "kernels/attention/attention_tile.h"

namespace weft {

void attend_avx512(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                   float* scratch) {
  attend_tile(kv, layer, kv_head, table, rows, n_rows, scratch);
}

}  // namespace weft
#endif
