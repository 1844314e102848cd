// Attention over the paged KV cache, for one tile of query rows. Built three
// times on x86-64, like the matmul kernels: baseline (attention.cc: the
// portable scalar-exp kernel, attention_kernel.h), AVX2/FMA/F16C
// (attention_avx2.cc) and AVX-512 F/BW/VL (attention_avx512.cc), the last two
// the vector tile kernel (attention_tile.h), which gives the same bits in both.
// Picked once by the CPU. The kernel only sees raw pointers (KvView,
// kv_view.h; QueryRow, query_row.h), and everything it inlines has internal
// linkage, so the builds never share code.
#pragma once
#include "base/cpu_features.h"
#include "kernels/attention/query_row.h"

namespace weft {

// The kernel for this process's kernel set (cpu_kernel_set()).
AttentionFn attention_kernel();

// The kernel of a set; nullptr when this build or CPU cannot run it.
// baseline: attend_baseline; avx2, avxvnni: attend_avx2; avx512vnni:
// attend_avx512 (attend_avx2 where the build has no AVX-512).
AttentionFn attention_kernel_of(KernelSet set);

}  // namespace weft
