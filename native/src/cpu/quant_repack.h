// The row-group layout of Q8_0 and Q4_0 matrices in memory (replacing the
// GGUF row layout at load, in place: the same bytes, each weight once).
//
// Rows are taken 8 at a time ("groups"); inside a group the weights are
// interleaved so that one 32-byte vector holds 4 consecutive weights of each
// of the 8 rows (row r in bytes 4r..4r+3). One vpdpbusd against 4 activation
// bytes broadcast to every lane then gives each row's partial dot product in
// its own int32 lane: no horizontal sums (quant_group_kernels.h).
//
// A group of 8 rows of K weights (units = K / 32 blocks) is 8 * row_bytes,
// unit after unit, each unit its 8 rows' f16 scales (16 bytes) then its weights:
//   Q8_0: [8 chunks][8 rows][4] u8 = q + 128   (chunk c: weights 4c..4c+3)
//   Q4_0: [4 vectors][8 rows][4] the GGUF nibble bytes: vector v holds bytes
//         4v..4v+3 of each row, whose low nibbles are weights 4v..4v+3 and
//         high nibbles weights 16+4v..16+4v+3 (q = nibble - 8)
// One stream per group: with the scales in a region of their own after the
// weights, a memory-bound one-token matmul ran at half the speed (measured).
// Both store an unsigned value u = q + offset (offset 128 resp. 8), so that
// u8 x s8 products (vpdpbusd) are exact; the kernels subtract
// offset * (sum of the activation block), shared by every row.
// The N % 8 rows after the last whole group stay GGUF rows (a "tail"); the
// kernels pack them into a zero-padded group of their own per matmul.
#pragma once
#include <cstddef>
#include <cstdint>

#include "matmul.h"

namespace weft {

constexpr int kGroupRows = 8;

// Whether matrices of this type are kept in row groups (Q8_0, Q4_0).
inline bool is_row_grouped(WeightType t) { return t == WeightType::Q8_0 || t == WeightType::Q4_0; }

// The value added to each q to make it unsigned: u = q + offset.
inline int group_offset(WeightType t) { return t == WeightType::Q8_0 ? 128 : 8; }

// Bytes of one 32-weight unit's weights inside a group (without scales).
inline size_t group_unit_bytes(WeightType t) { return t == WeightType::Q8_0 ? 256 : 128; }

// Unit u of a group: its 8 f16 scales (16 bytes), then its weights.
inline size_t group_unit_stride(WeightType t) { return 16 + group_unit_bytes(t); }

// Packs `count` (1..8) GGUF rows of K weights into one group at dst (8 *
// row_bytes bytes); missing rows are zero weights with zero scales.
void pack_group(WeightType type, const uint8_t* const* rows, int count, int64_t K, uint8_t* dst);

// Rewrites N GGUF rows of K weights at `blocks` into the row-group layout, in
// place (each group's bytes are exactly its rows' bytes).
void repack_rows(WeightType type, uint8_t* blocks, int64_t N, int64_t K);

// Row n of a row-grouped matrix of N rows back as one GGUF row (row_bytes at out).
void unpack_row(WeightType type, const uint8_t* blocks, int64_t N, int64_t K, int64_t n, uint8_t* out);

}  // namespace weft
