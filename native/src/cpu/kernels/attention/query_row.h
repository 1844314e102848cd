// What an attention kernel takes: the query rows of one tile (QueryRow), the
// kernel signature (AttentionFn), and the kernel of each build. Below
// attention.h (the choice of kernel by kernel set): the kernel bodies
// (attention_kernel.h, attention_tile.h) include this, never attention.h.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/attention/kv_view.h"

namespace weft {

// One query row of an attention tile: a (token, query head) pair.
struct QueryRow {
  const float* q;
  float* out;
  int64_t begin, end;  // cache positions it attends to: [begin, end)
};

// Attention for rows that share one kv head of one sequence; `table` is that
// sequence's block table. scratch: 2 * block_size * head_dim + block_size +
// n_rows * (head_dim + 2) floats.
using AttentionFn = void (*)(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                             float* scratch);

void attend_baseline(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                     float* scratch);
void attend_avx2(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                 float* scratch);
void attend_avx512(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                   float* scratch);

}  // namespace weft
