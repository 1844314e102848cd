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
//
// Q4_K and Q6_K have a row-group layout of their own ("k-groups", below):
// 16 rows per group, one 64-byte vector holding 4 consecutive weights of
// each of the 16 rows, scales and mins unpacked to bytes at load.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/matmul_types.h"

namespace weft {

constexpr int kGroupRows = 8;

// Whether matrices of this type are kept in row groups (Q8_0, Q4_0 in the
// groups above; Q4_K, Q6_K in the k-groups below): a row is then read back
// with unpack_row.
inline bool is_row_grouped(WeightType t) {
  return t == WeightType::Q8_0 || t == WeightType::Q4_0 || t == WeightType::Q4_K || t == WeightType::Q6_K;
}

// Q8_0 / Q4_0: the 8-row groups above.
inline bool is_q8_grouped(WeightType t) { return t == WeightType::Q8_0 || t == WeightType::Q4_0; }

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

// Row n of a row-grouped matrix of N rows back as one GGUF row (row_bytes at
// out); any row-grouped type, k-groups included.
void unpack_row(WeightType type, const uint8_t* blocks, int64_t N, int64_t K, int64_t n, uint8_t* out);

// ---- k-groups: Q4_K and Q6_K ----
//
// Rows go 16 at a time; a group is its K / 256 super-blocks one after the
// other, each super-block holding the 16 rows' blocks as below ("slice" =
// 4 consecutive weights of each of the 16 rows, 64 bytes, row r at bytes
// 4r..4r+3, so one vpdpbusd against 4 activation bytes broadcast adds to each
// row's own int32 lane; a 256-bit register takes rows 0-7 or 8-15).
//   Q4_K, 2368 bytes (148 per row, GGUF: 144):
//     [0, 32)      d[16]     f16 bits, as stored
//     [32, 64)     dmin[16]  f16 bits
//     [64, 192)    sc[8 units][16 rows]        u8, the 6-bit scales unpacked
//     [192, 320)   m[4 pairs][16 rows][2]      u8, the 6-bit mins (units 2k, 2k+1)
//     [320, 2368)  [4 unit pairs c][8 slices s][16 rows][4]: byte i's low
//                  nibble is weight 64c + 4s + i (unit 2c), its high nibble
//                  weight 64c + 32 + 4s + i (unit 2c + 1), as GGUF pairs them
//   Q6_K, 3360 bytes (210 per row, as GGUF):
//     [0, 32)      d[16]     f16 bits
//     [32, 288)    sc[16 sub-blocks of 16][16 rows]  int8
//     [288, 3360)  [16 sub-blocks b][3 vectors v][16 rows][4]: with u_k =
//                  the 6-bit value (q + 32) of weight 16b + 4k + i, byte i of
//                  vector v is u_v | (bits 2v, 2v + 1 of u_3) << 6, so slices
//                  0-2 are one AND each and slice 3 is gathered from the top bits
// The last group, when N % 16 != 0, is padded with zero rows (d = 0): every
// group is whole, and a matrix takes kgroup_matrix_bytes.

constexpr int kKGroupRows = 16;

// Bytes of one super-block of a k-group (16 rows x 256 weights).
inline size_t kgroup_block_bytes(WeightType t) { return t == WeightType::Q4_K ? 2368 : 3360; }

// Bytes of a matrix of N rows of K weights in k-groups.
inline size_t kgroup_matrix_bytes(WeightType t, int64_t N, int64_t K) {
  return static_cast<size_t>((N + kKGroupRows - 1) / kKGroupRows) * static_cast<size_t>(K / 256) * kgroup_block_bytes(t);
}

// Packs `count` (1..16) GGUF rows of K weights into one k-group at dst
// (K / 256 * kgroup_block_bytes bytes); missing rows are zeros.
void pack_kgroup(WeightType type, const uint8_t* const* rows, int count, int64_t K, uint8_t* dst);

// Packs `count` consecutive GGUF rows (the first at a group boundary) into
// their (count + 15) / 16 k-groups at dst.
void pack_kgroups(WeightType type, const uint8_t* rows, int64_t count, int64_t K, uint8_t* dst);

}  // namespace weft
