// Attention over the paged KV cache, for one tile of query rows. Built three
// times on x86-64, like the matmul kernels: baseline (attention.cc: the
// portable scalar-exp kernel, attention_kernel.h), AVX2/FMA/F16C
// (attention_avx2.cc) and AVX-512 F/BW/VL (attention_avx512.cc), the last two
// the vector tile kernel (attention_tile.h), which gives the same bits in both.
// Picked once by the CPU. The kernel only sees raw pointers (KvView,
// kv_cache.h), and everything it inlines has internal linkage, so the builds
// never share code.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cpu_features.h"
#include "kv_cache.h"

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

// The kernel for this process's kernel set (cpu_kernel_set()).
AttentionFn attention_kernel();

// The kernel of a set; nullptr when this build or CPU cannot run it.
// baseline: attend_baseline; avx2, avxvnni: attend_avx2; avx512vnni:
// attend_avx512 (attend_avx2 where the build has no AVX-512).
AttentionFn attention_kernel_of(KernelSet set);

void attend_baseline(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                     float* scratch);
void attend_avx2(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                 float* scratch);
void attend_avx512(const KvView& kv, int layer, int kv_head, const int32_t* table, const QueryRow* rows, int n_rows,
                   float* scratch);

}  // namespace weft
