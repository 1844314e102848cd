// The paged KV cache (see kv_cache.h for the layout).
#include "model/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "base/half.h"
#include "kernels/half/half_rows.h"

namespace weft {

KvView KvCache::view() const {
  KvView v;
  v.precision = precision;
  v.f32 = f32.data();
  v.f16 = f16.data();
  v.u8 = u8.data();
  v.u8_params = u8_params.data();
  v.num_blocks = num_blocks;
  v.block_size = block_size;
  v.kv_heads = kv_heads;
  v.head_dim = head_dim;
  return v;
}

void KvCache::write_row(int layer, int k_or_v, size_t block, int head, size_t slot, const float* src) {
  const size_t at = cache_row_offset(view(), layer, k_or_v, block, head, slot);
  const int n = head_dim;
  if (precision == KvPrecision::F32) {
    std::memcpy(&f32[at], src, n * sizeof(float));
  } else if (precision == KvPrecision::F16) {
    to_half_kernel()(src, &f16[at], n);
  } else {
    // Asymmetric 8-bit: the row's range [min, max] mapped onto 0..255.
    float lo = src[0], hi = src[0];
    for (int i = 1; i < n; ++i) lo = std::min(lo, src[i]), hi = std::max(hi, src[i]);
    const float scale = (hi - lo) / 255.0f;
    const float inv = scale > 0 ? 1.0f / scale : 0.0f;
    for (int i = 0; i < n; ++i) u8[at + i] = static_cast<uint8_t>(std::min(255.0f, std::nearbyint((src[i] - lo) * inv)));
    u8_params[at / n * 2] = scale;
    u8_params[at / n * 2 + 1] = lo;
  }
}

void KvCache::prefetch_row(int layer, int k_or_v, size_t block, int head, size_t slot) const {
  const size_t at = cache_row_offset(view(), layer, k_or_v, block, head, slot);
  const char* row = precision == KvPrecision::F32   ? reinterpret_cast<const char*>(&f32[at])
                    : precision == KvPrecision::F16 ? reinterpret_cast<const char*>(&f16[at])
                                                    : reinterpret_cast<const char*>(&u8[at]);
  const size_t bytes = static_cast<size_t>(head_dim) * (precision == KvPrecision::F32 ? 4 : precision == KvPrecision::F16 ? 2 : 1);
  for (size_t line = 0; line < bytes; line += 64) __builtin_prefetch(row + line, 1, 3);
  __builtin_prefetch(row + bytes - 1, 1, 3);  // a row that does not start on a line ends on one more
}

void KvCache::copy_block(int from_block, int to_block) {
  const KvView v = view();
  const size_t block_elements = static_cast<size_t>(kv_heads) * block_size * head_dim;
  for (int layer = 0; layer < layers; ++layer)
    for (int kv = 0; kv < 2; ++kv) {
      const size_t from = cache_row_offset(v, layer, kv, from_block, 0, 0), to = cache_row_offset(v, layer, kv, to_block, 0, 0);
      if (precision == KvPrecision::F32) {
        std::memmove(&f32[to], &f32[from], block_elements * 4);
      } else if (precision == KvPrecision::F16) {
        std::memmove(&f16[to], &f16[from], block_elements * 2);
      } else {
        std::memmove(&u8[to], &u8[from], block_elements);
        std::memmove(&u8_params[to / head_dim * 2], &u8_params[from / head_dim * 2],
                     block_elements / head_dim * 2 * sizeof(float));
      }
    }
}

double kv_cache_bytes(size_t elements, int head_dim, KvPrecision precision) {
  const double n = static_cast<double>(elements);
  if (precision == KvPrecision::F32) return n * 4;
  if (precision == KvPrecision::F16) return n * 2;
  return n + n / head_dim * 2 * sizeof(float);
}

double physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<double>(pages) * static_cast<double>(page);
#endif
  return 0;
}

std::string allocate_cache(KvCache& cache, int layers, int kv_heads, int head_dim, int num_blocks, int block_size,
                           KvPrecision precision, double other_bytes) {
  if (num_blocks < 2) return "numBlocks must be at least 2 (block 0 is the null block)";
  if (block_size < 1 || block_size > 65536) return "blockSize must be in [1, 65536]";
  // elements = layers * 2 * blocks * kv_heads * block_size * head_dim, in 64 bits
  // (every factor < 2^31 and the model dims were bounded at construction).
  const double estimate = 2.0 * layers * num_blocks * kv_heads * static_cast<double>(block_size) * head_dim;
  if (estimate > 9.0e15) return "KV cache too large";
  const size_t elements = static_cast<size_t>(2) * layers * static_cast<size_t>(num_blocks) * kv_heads *
                          static_cast<size_t>(block_size) * head_dim;
  const double bytes = kv_cache_bytes(elements, head_dim, precision);
  // The cache's pages are committed as it fills; one larger than the machine's
  // RAM would get the process killed by the OOM killer later instead of failing
  // here. What must fit:
  // the weights, the new cache and the old one (freed only once the new one is in).
  const double ram = physical_memory_bytes();
  const double old_cache = kv_cache_bytes(cache.elements, head_dim, cache.precision);
  const double needed = other_bytes + old_cache + bytes;
  if (ram > 0 && needed > ram)
    return "a KV cache of " + std::to_string(static_cast<uint64_t>(bytes)) + " bytes, with the weights and the current cache (" +
           std::to_string(static_cast<uint64_t>(needed)) + " bytes in all), exceeds the physical memory (" +
           std::to_string(static_cast<uint64_t>(ram)) + " bytes)";
  KvCache fresh;
  fresh.layers = layers;
  fresh.kv_heads = kv_heads;
  fresh.head_dim = head_dim;
  fresh.num_blocks = num_blocks;
  fresh.block_size = block_size;
  fresh.precision = precision;
  fresh.elements = elements;
  try {
    if (precision == KvPrecision::F32) fresh.f32 = ZeroedArray<float>(elements);
    else if (precision == KvPrecision::F16) fresh.f16 = ZeroedArray<uint16_t>(elements);
    else {
      fresh.u8 = ZeroedArray<uint8_t>(elements);
      fresh.u8_params = ZeroedArray<float>(elements / head_dim * 2);
    }
  } catch (const std::bad_alloc&) {
    return "out of memory allocating the KV cache (" + std::to_string(elements) + " elements)";
  }
  cache = std::move(fresh);
  return "";
}

}  // namespace weft
