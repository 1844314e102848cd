// The paged KV cache as the attention kernels read it: its precision, raw
// pointers and sizes, and the one function that computes its layout
// [layer][k=0|v=1][block][kv_head][slot][head_dim]. The cache itself (its
// storage, writes, copies and allocation) is the model's (model/kv_cache.h),
// which builds on this header, never the other way.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft {

enum class KvPrecision { F32, F16, U8 };

// The cache as the attention kernels see it: raw pointers and sizes.
struct KvView {
  KvPrecision precision = KvPrecision::F32;
  const float* f32 = nullptr;
  const uint16_t* f16 = nullptr;
  const uint8_t* u8 = nullptr;
  const float* u8_params = nullptr;  // (scale, min) per row
  int num_blocks = 0, block_size = 0, kv_heads = 0, head_dim = 0;
};

// Offset (in elements) of the cache row (layer, k=0|v=1, block, kv head, slot).
// The only place the layout is computed: writes, copies and the kernels' reads
// all use it. `static`, so the baseline and the AVX2 attention builds each keep
// their own copy (see matmul_kernels.h).
static inline size_t cache_row_offset(const KvView& kv, int layer, int k_or_v, size_t block, int head, size_t slot) {
  return ((((static_cast<size_t>(layer) * 2 + k_or_v) * kv.num_blocks + block) * kv.kv_heads + head) * kv.block_size + slot) *
         kv.head_dim;
}

}  // namespace weft
