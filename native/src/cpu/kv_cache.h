// The paged KV cache: its storage, its layout, the row writes and block copies
// a step makes, and its allocation.
//
// Layout [layer][k=0|v=1][block][kv_head][slot][head_dim]: one head's keys of
// one block are contiguous, which is what attention scans. Block 0 is the null
// block (never written by a valid step, see step_check.cc).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "zeroed_array.h"

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

struct KvCache {
  int layers = 0, kv_heads = 0, head_dim = 0;
  int num_blocks = 0;
  int block_size = 0;  // 0 until allocated
  KvPrecision precision = KvPrecision::F32;
  size_t elements = 0;  // layers * 2 * num_blocks * kv_heads * block_size * head_dim
  // Allocated untouched (zeroed_array.h): pages are committed as rows are
  // written. Attention reads a sequence's rows below its past length plus its
  // new tokens (step_check.cc bounds them by its block table), which the
  // engine has written; a row never written reads as zeros, as it always did.
  ZeroedArray<float> f32;     // used when precision == F32
  ZeroedArray<uint16_t> f16;  // used when precision == F16 (IEEE half bits)
  // U8: each row (one token, one kv head: head_dim values) is stored as bytes q
  // with x ~= min + q * scale; u8_params holds (scale, min) per row.
  ZeroedArray<uint8_t> u8;
  ZeroedArray<float> u8_params;  // [elements / head_dim * 2]

  KvView view() const;

  // Writes head_dim values at the row (layer, k_or_v, block, head, slot), in the
  // cache's precision.
  void write_row(int layer, int k_or_v, size_t block, int head, size_t slot, const float* values);
  // Asks for that row's cache lines, for writing, ahead of its write_row: a
  // decode step's rows were evicted by the weights' stream, and a write to
  // them otherwise waits on memory.
  void prefetch_row(int layer, int k_or_v, size_t block, int head, size_t slot) const;

  // Copy-on-write: block `to` becomes a copy of block `from`, in every layer,
  // keys and values. Both are valid block numbers (checked by validate_step).
  void copy_block(int from, int to);
};

// Bytes a cache of `elements` values takes, u8's per-row (scale, min) included.
double kv_cache_bytes(size_t elements, int head_dim, KvPrecision precision);

// Replaces `cache` with a zeroed one of the given size (memory committed only as it is written), for a model of
// `layers` layers of kv_heads x head_dim. `other_bytes`: what else the model
// holds (its weights), counted in the check against physical memory. Returns ""
// or an error message (the old cache is kept then).
std::string allocate_cache(KvCache& cache, int layers, int kv_heads, int head_dim, int num_blocks, int block_size,
                           KvPrecision precision, double other_bytes);

}  // namespace weft
