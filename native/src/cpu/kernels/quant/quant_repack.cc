// GGUF rows <-> the row-group layouts: Q8_0 and Q4_0 in 8-row groups, Q4_K and
// Q6_K in 16-row k-groups (see quant_repack.h).
#include "kernels/quant/quant_repack.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/quant/quant_formats.h"

namespace weft {

void pack_group(WeightType type, const uint8_t* const* rows, int count, int64_t K, uint8_t* dst) {
  const int units = static_cast<int>(K / kQuantUnit);
  const int block_bytes = block_format(type).bytes;
  for (int u = 0; u < units; ++u) {
    uint8_t* scales = dst + u * group_unit_stride(type);
    uint8_t* to = scales + 16;
    for (int r = 0; r < kGroupRows; ++r) {
      const uint8_t* b = r < count ? rows[r] + static_cast<size_t>(u) * block_bytes : nullptr;
      // The scale's f16 bits as stored (zero for a missing row).
      const uint16_t d = b ? read_u16(b) : 0;
      std::memcpy(scales + r * 2, &d, 2);
      if (type == WeightType::Q8_0) {
        for (int i = 0; i < 32; ++i)  // chunk i / 4, byte i % 4 of row r's lane; u = q + 128 (q = 0 when missing)
          to[(i / 4) * 32 + r * 4 + i % 4] = b ? static_cast<uint8_t>(b[2 + i] ^ 0x80) : 0x80;
      } else {
        for (int i = 0; i < 16; ++i)  // GGUF nibble byte i; 0x88 = two zero weights (nibble 8)
          to[(i / 4) * 32 + r * 4 + i % 4] = b ? b[2 + i] : 0x88;
      }
    }
  }
}

void repack_rows(WeightType type, uint8_t* blocks, int64_t N, int64_t K) {
  const size_t row_bytes = quant_row_bytes(type, K);
  std::vector<uint8_t> rows(kGroupRows * row_bytes);
  for (int64_t g = 0; g + kGroupRows <= N; g += kGroupRows) {
    uint8_t* at = blocks + static_cast<size_t>(g) * row_bytes;
    std::memcpy(rows.data(), at, rows.size());
    const uint8_t* row_ptrs[kGroupRows];
    for (int r = 0; r < kGroupRows; ++r) row_ptrs[r] = rows.data() + r * row_bytes;
    pack_group(type, row_ptrs, kGroupRows, K, at);
  }
}

namespace {

// Q4_K's 12 bytes of 6-bit scales and mins from 8 + 8 values (the inverse of
// q4k_scale_min: every bit is used, so the bytes come back exactly).
void q4k_pack_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t s[12]) {
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
  }
}

// Q6_K: sets the 6-bit value (q + 32) of weight i of a GGUF block (the
// layout of decode_unit in quant_formats.h).
void q6k_set_value(uint8_t* b, int i, int u) {
  const int half = i / 128, quarter = i % 128 / 32, at = i % 32;
  uint8_t& ql = b[64 * half + 32 * (quarter % 2) + at];
  uint8_t& qh = b[128 + 32 * half + at];
  ql = static_cast<uint8_t>(quarter >= 2 ? (ql & 0x0f) | ((u & 15) << 4) : (ql & 0xf0) | (u & 15));
  qh = static_cast<uint8_t>((qh & ~(3 << (2 * quarter))) | (((u >> 4) & 3) << (2 * quarter)));
}

// One super-block of a k-group from (up to) 16 GGUF blocks; nullptr = a zero row.
void pack_kblock(WeightType type, const uint8_t* const* b, uint8_t* dst) {
  const size_t bytes = kgroup_block_bytes(type);
  std::memset(dst, 0, bytes);
  for (int r = 0; r < kKGroupRows; ++r) {
    if (!b[r]) continue;
    if (type == WeightType::Q4_K) {
      std::memcpy(dst + 2 * r, b[r], 2);
      std::memcpy(dst + 32 + 2 * r, b[r] + 2, 2);
      for (int j = 0; j < 8; ++j) {
        int sc, m;
        q4k_scale_min(b[r] + 4, j, &sc, &m);
        dst[64 + 16 * j + r] = static_cast<uint8_t>(sc);
        dst[192 + 32 * (j / 2) + 2 * r + j % 2] = static_cast<uint8_t>(m);
      }
      const uint8_t* qs = b[r] + 16;
      for (int c = 0; c < 4; ++c)  // slice s of unit pair c: the GGUF bytes 32c + 4s .. + 3
        for (int sl = 0; sl < 8; ++sl) std::memcpy(dst + 320 + 512 * c + 64 * sl + 4 * r, qs + 32 * c + 4 * sl, 4);
    } else {
      std::memcpy(dst + 2 * r, b[r] + 208, 2);
      for (int s = 0; s < 16; ++s) dst[32 + 16 * s + r] = b[r][192 + s];
      // The 256 values u = q + 32 in order first (one pass over ql / qh, the layout
      // of decode_unit), then regrouped.
      uint8_t u[256];
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 32; ++i) {
          const uint8_t ql0 = b[r][64 * h + i], ql1 = b[r][64 * h + 32 + i], qh = b[r][128 + 32 * h + i];
          u[128 * h + i] = static_cast<uint8_t>((ql0 & 15) | ((qh & 3) << 4));
          u[128 * h + 32 + i] = static_cast<uint8_t>((ql1 & 15) | (((qh >> 2) & 3) << 4));
          u[128 * h + 64 + i] = static_cast<uint8_t>((ql0 >> 4) | (((qh >> 4) & 3) << 4));
          u[128 * h + 96 + i] = static_cast<uint8_t>((ql1 >> 4) | (((qh >> 6) & 3) << 4));
        }
      for (int s = 0; s < 16; ++s)
        for (int i = 0; i < 4; ++i) {
          const int top = u[16 * s + 12 + i];
          for (int v = 0; v < 3; ++v)
            dst[288 + 192 * s + 64 * v + 4 * r + i] = static_cast<uint8_t>(u[16 * s + 4 * v + i] | (((top >> (2 * v)) & 3) << 6));
        }
    }
  }
}

// Row r of a k-group super-block back as its GGUF block.
void unpack_kblock(WeightType type, const uint8_t* g, int r, uint8_t* b) {
  if (type == WeightType::Q4_K) {
    std::memcpy(b, g + 2 * r, 2);
    std::memcpy(b + 2, g + 32 + 2 * r, 2);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) sc[j] = g[64 + 16 * j + r], m[j] = g[192 + 32 * (j / 2) + 2 * r + j % 2];
    q4k_pack_scales(sc, m, b + 4);
    for (int c = 0; c < 4; ++c)
      for (int p = 0; p < 32; ++p) b[16 + 32 * c + p] = g[320 + 512 * c + 64 * (p / 4) + 4 * r + p % 4];
  } else {
    std::memcpy(b + 208, g + 2 * r, 2);
    for (int s = 0; s < 16; ++s) b[192 + s] = g[32 + 16 * s + r];
    for (int s = 0; s < 16; ++s)
      for (int i = 0; i < 4; ++i) {
        int top = 0;
        for (int v = 0; v < 3; ++v) {
          const uint8_t byte = g[288 + 192 * s + 64 * v + 4 * r + i];
          q6k_set_value(b, 16 * s + 4 * v + i, byte & 63);
          top |= (byte >> 6) << (2 * v);
        }
        q6k_set_value(b, 16 * s + 12 + i, top);
      }
  }
}

}  // namespace

void pack_kgroup(WeightType type, const uint8_t* const* rows, int count, int64_t K, uint8_t* dst) {
  const int blocks = static_cast<int>(K / 256);
  const int block_bytes = block_format(type).bytes;
  for (int blk = 0; blk < blocks; ++blk) {
    const uint8_t* b[kKGroupRows];
    for (int r = 0; r < kKGroupRows; ++r) b[r] = r < count ? rows[r] + static_cast<size_t>(blk) * block_bytes : nullptr;
    pack_kblock(type, b, dst + static_cast<size_t>(blk) * kgroup_block_bytes(type));
  }
}

void pack_kgroups(WeightType type, const uint8_t* rows, int64_t count, int64_t K, uint8_t* dst) {
  const size_t row_bytes = quant_row_bytes(type, K);
  const size_t group_bytes = static_cast<size_t>(K / 256) * kgroup_block_bytes(type);
  for (int64_t g = 0; g * kKGroupRows < count; ++g) {
    const uint8_t* ptrs[kKGroupRows];
    const int n = static_cast<int>(std::min<int64_t>(kKGroupRows, count - g * kKGroupRows));
    for (int r = 0; r < n; ++r) ptrs[r] = rows + static_cast<size_t>(g * kKGroupRows + r) * row_bytes;
    pack_kgroup(type, ptrs, n, K, dst + static_cast<size_t>(g) * group_bytes);
  }
}

void unpack_row(WeightType type, const uint8_t* blocks, int64_t N, int64_t K, int64_t n, uint8_t* out) {
  if (type == WeightType::Q4_K || type == WeightType::Q6_K) {
    const size_t group_bytes = static_cast<size_t>(K / 256) * kgroup_block_bytes(type);
    const uint8_t* g = blocks + static_cast<size_t>(n / kKGroupRows) * group_bytes;
    for (int64_t blk = 0; blk < K / 256; ++blk)
      unpack_kblock(type, g + blk * kgroup_block_bytes(type), static_cast<int>(n % kKGroupRows),
                    out + blk * block_format(type).bytes);
    return;
  }
  const size_t row_bytes = quant_row_bytes(type, K);
  const int64_t grouped = N / kGroupRows * kGroupRows;
  if (n >= grouped) {  // a tail row: stored as it was
    std::memcpy(out, blocks + static_cast<size_t>(n) * row_bytes, row_bytes);
    return;
  }
  const uint8_t* g = blocks + static_cast<size_t>(n / kGroupRows) * kGroupRows * row_bytes;
  const int r = static_cast<int>(n % kGroupRows);
  const int units = static_cast<int>(K / kQuantUnit);
  const int block_bytes = block_format(type).bytes;
  for (int u = 0; u < units; ++u) {
    uint8_t* b = out + static_cast<size_t>(u) * block_bytes;
    std::memcpy(b, g + u * group_unit_stride(type) + r * 2, 2);
    const uint8_t* from = g + u * group_unit_stride(type) + 16;
    const int bytes = type == WeightType::Q8_0 ? 32 : 16;
    for (int i = 0; i < bytes; ++i) {
      const uint8_t v = from[(i / 4) * 32 + r * 4 + i % 4];
      b[2 + i] = type == WeightType::Q8_0 ? static_cast<uint8_t>(v ^ 0x80) : v;
    }
  }
}

}  // namespace weft
