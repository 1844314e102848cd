// GGUF rows <-> the row-group layout of Q8_0 and Q4_0 (see quant_repack.h).
#include "quant_repack.h"

#include <cstring>
#include <vector>

#include "quant_formats.h"

namespace weft {

void pack_group(WeightType type, const uint8_t* const* rows, int count, int64_t K, uint8_t* dst) {
  const int units = static_cast<int>(K / kQuantUnit);
  const size_t unit_bytes = group_unit_bytes(type);
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

void unpack_row(WeightType type, const uint8_t* blocks, int64_t N, int64_t K, int64_t n, uint8_t* out) {
  const size_t row_bytes = quant_row_bytes(type, K);
  const int64_t grouped = N / kGroupRows * kGroupRows;
  if (n >= grouped) {  // a tail row: stored as it was
    std::memcpy(out, blocks + static_cast<size_t>(n) * row_bytes, row_bytes);
    return;
  }
  const uint8_t* g = blocks + static_cast<size_t>(n / kGroupRows) * kGroupRows * row_bytes;
  const int r = static_cast<int>(n % kGroupRows);
  const int units = static_cast<int>(K / kQuantUnit);
  const size_t unit_bytes = group_unit_bytes(type);
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
