// Attention over the paged KV cache, for one tile of query rows. Built twice
// on x86-64, like the matmul kernels: baseline (attention.cc) and AVX2/FMA/F16C
// (attention_avx2.cc), picked once by the CPU. The kernel only sees raw
// pointers (KvView), and everything it inlines has internal linkage, so the
// two builds never share code.
#pragma once
#include <cstddef>
#include <cstdint>

#include "model.h"

namespace weft {

// The cache as the kernel sees it (see KvCache in model.h for the layout).
struct KvView {
  KvPrecision precision = KvPrecision::F32;
  const float* f32 = nullptr;
  const uint16_t* f16 = nullptr;
  const uint8_t* u8 = nullptr;
  const float* u8_params = nullptr;  // (scale, min) per row
  int num_blocks = 0, block_size = 0, kv_heads = 0, head_dim = 0;
};

// Offset of the cache row (layer, k=0|v=1, block, kv head, slot) in the
// layout of model.h. The only place that layout is computed: forward.cc
// writes and copies rows with it, the kernels read them. `static`, so the
// baseline and the AVX2 builds each keep their own copy (see matmul_kernels.h).
static inline size_t cache_row_offset(const KvView& kv, int layer, int k_or_v, size_t block, int head, size_t slot) {
  return ((((static_cast<size_t>(layer) * 2 + k_or_v) * kv.num_blocks + block) * kv.kv_heads + head) * kv.block_size + slot) *
         kv.head_dim;
}

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

// The kernel for this CPU.
AttentionFn attention_kernel();

void attend_baseline(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                     float* scratch);
void attend_avx2(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                 float* scratch);

}  // namespace weft
