// The paged KV cache: its storage, its layout, the row writes and block copies
// a step makes, and its allocation.
//
// Layout [layer][k=0|v=1][block][kv_head][slot][head_dim] (cache_row_offset,
// kernels/attention/kv_view.h): one head's keys of one block are contiguous,
// which is what attention scans. Block 0 is the null block (never written by a
// valid step, see step_check.cc).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/zeroed_array.h"
#include "kernels/attention/kv_view.h"

namespace weft {

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

// Total physical memory in bytes, or 0 when unknown.
double physical_memory_bytes();

// Replaces `cache` with a zeroed one of the given size (memory committed only as it is written), for a model of
// `layers` layers of kv_heads x head_dim. `other_bytes`: what else the model
// holds (its weights), counted in the check against physical memory. Returns ""
// or an error message (the old cache is kept then).
std::string allocate_cache(KvCache& cache, int layers, int kv_heads, int head_dim, int num_blocks, int block_size,
                           KvPrecision precision, double other_bytes);

}  // namespace weft
