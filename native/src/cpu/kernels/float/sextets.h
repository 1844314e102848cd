// The sextet layout of 16-bit (F16 / BF16) matrices read into memory: rows
// taken 6 at a time, interleaved column chunk by column chunk, so that the
// matmul tiles read one memory stream per 6 rows instead of 6.
//
// Why: the tiles read several rows at once (matmul_kernels.h: 1 token x 6
// rows; matmul_avx512.cc: up to 8 tokens x 3 row pairs). Row-major, those are
// streams K elements apart, each advancing 16 bytes per step. A probe of the
// one-token LM head on an AMD Zen 5 (2 threads) read 33.7 GB/s from 8 such
// rows against 41.0 GB/s with them interleaved (docs/performance.md).
// Six, not eight: the AVX-512 tile holds 3 row pairs for 8 tokens (28 of 32
// registers), and a group is then exactly one such block.
//
// A sextet of rows 6g..6g+5 is 6 * K elements, chunk after chunk:
//   [K / 8 chunks][6 rows][8 columns]   (chunk c: columns 8c..8c+7)
// so element (6g + r, 8c + j) lies at 6gK + 48c + 8r + j; rows 2q and 2q + 1
// of a chunk are 16 consecutive elements (one 512-bit register, widened).
// The N % 6 rows after the last whole sextet stay row-major where they were
// (row n at nK), so a matrix keeps its size and rows past the last sextet
// read as they always did. Only matrices with K % 8 == 0 use it (every chunk
// whole); a mapped matrix (mapped_file.h) keeps the file's row-major layout.
//
// On by default on Intel CPUs, off elsewhere; WEFT_SEXTETS=1 or 0 when a
// model loads decides instead. Measured on 2 threads (docs/performance.md,
// "Float rows in sextets" and "Sextets on an Intel Ice Lake Xeon"): an Intel
// Ice Lake Xeon gained in every kind of
// F16 step (one stream 1.06x, 16 streams 1.08x, 512-token prefill 1.13x);
// an AMD Zen 5 gained one stream 1.20x and prefill 1.12x but lost 16 streams
// (0.85x), a loss not understood yet.
//
// Widening a weight is exact, and the kernels take the same products in the
// same order from either layout: results are bit-identical (test/native).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/cpu_features.h"

namespace weft {

constexpr int kSextetRows = 6;

// Whether loads keep 16-bit matrices in sextets: WEFT_SEXTETS=1 or 0 (read
// per load), else the CPU's default (above).
inline bool sextets_wanted() {
  const char* env = std::getenv("WEFT_SEXTETS");
  if (env != nullptr && std::strcmp(env, "1") == 0) return true;
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  return cpu_flags().intel;
}

// Whether a 16-bit matrix of K columns can be kept in sextets.
inline bool sextets_fit(int64_t K) { return K > 0 && K % 8 == 0; }

// Offset (in elements) of element (row, col) of an N x K matrix kept in sextets.
inline size_t sextet_offset(int64_t row, int64_t col, int64_t N, int64_t K) {
  const int64_t whole = N - N % kSextetRows;
  if (row >= whole) return static_cast<size_t>(row * K + col);
  const int64_t first = row - row % kSextetRows;
  return static_cast<size_t>(first * K + (col >> 3) * 8 * kSextetRows + (row - first) * 8 + (col & 7));
}

// Rewrites the sextets [g0, g1) of a row-major 16-bit matrix of K columns in
// place (K % 8 == 0). `scratch` holds one sextet (6 * K elements) while it is
// rewritten; the rows after the last whole sextet are not touched.
inline void to_sextets(uint16_t* w, int64_t K, size_t g0, size_t g1, std::vector<uint16_t>& scratch) {
  const size_t sextet = static_cast<size_t>(K) * kSextetRows;
  scratch.resize(sextet);
  for (size_t g = g0; g < g1; ++g) {
    uint16_t* at = w + g * sextet;
    std::memcpy(scratch.data(), at, sextet * sizeof(uint16_t));
    for (int64_t c = 0; c < K / 8; ++c)
      for (int r = 0; r < kSextetRows; ++r)
        std::memcpy(at + (c * kSextetRows + r) * 8, &scratch[r * K + c * 8], 8 * sizeof(uint16_t));
  }
}

}  // namespace weft
