// The AMX-INT8 Q8_0 row-group kernel (quant_amx.h). Built with -mamx-tile
// -mamx-int8 and the AVX-512 flags, without FMA contraction (CMakeLists.txt);
// called only where cpu_uses_amx().
#include "kernels/quant/amx/quant_amx.h"

#if defined(WEFT_AMX_KERNELS)
// GCC 12's _mm512_cvtph_ps / _mm512_cvtepi32_ps start from _mm512_undefined_ps,
// which -Wmaybe-uninitialized reports falsely once inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/quant/quant_repack.h"

#if defined(WEFT_AMX_EMULATE)
#include "../../../../../../bench/amx/emulate.h"  // plain C++ stand-ins, for bench/amx/run.sh --emulate only
#else
// Tile instructions name their registers in the opcode, so they take literal
// numbers. GCC's _tile_loadd does not tell the compiler it reads memory and
// _tile_loadconfig claims to read only 8 bytes of the 64-byte config: these
// say "memory", so no store the tiles read can be moved past them.
#define WEFT_TILE_CONFIG(cfg) __asm__ volatile("ldtilecfg %0" ::"m"(*(cfg)) : "memory")
#define WEFT_TILE_LOAD(t, base, stride) \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #t ::"r"(static_cast<const void*>(base)), "r"(static_cast<long>(stride)) : "memory")
#define WEFT_TILE_STORE(t, base, stride) \
  __asm__ volatile("tilestored %%tmm" #t ", (%0,%1,1)" ::"r"(static_cast<void*>(base)), "r"(static_cast<long>(stride)) : "memory")
#define WEFT_TILE_ZERO(t) __asm__ volatile("tilezero %%tmm" #t ::)
// dst += A (signed bytes) . B (unsigned bytes), int32, exact.
#define WEFT_TILE_DPBSUD(dst, a, b) __asm__ volatile("tdpbsud %%tmm" #b ", %%tmm" #a ", %%tmm" #dst ::)
#define WEFT_TILE_RELEASE() __asm__ volatile("tilerelease" ::: "memory")
#endif

// One unit's integer products for 16 tokens x 16 rows (two groups): A tile ta
// (16 tokens x the unit's 32 activation bytes, in place at stride K) times B
// tile tb (the unit's 8 chunks x 16 rows x 4 bytes, from the call's pair
// copy) into C tile tc. Stored later (WEFT_TILE_STORE(tc, buf, 64): buf[16
// tokens][16 rows]).
#define WEFT_AMX_PRODUCT(ta, tb, tc, a, stride, b) \
  do {                                             \
    WEFT_TILE_LOAD(ta, a, stride);                 \
    WEFT_TILE_LOAD(tb, b, 64);                     \
    WEFT_TILE_ZERO(tc);                            \
    WEFT_TILE_DPBSUD(tc, ta, tb);                  \
  } while (0)

// The same from the row groups in place: B tiles 1 / 2 (8 chunks x 8 rows x 4
// bytes of groups a and b, at stride 32) into C tiles tca / tcb (16 tokens x 8
// rows each; stored side by side: tca at buf, tcb at buf + 8).
#define WEFT_AMX_PRODUCT_IN_PLACE(tca, tcb, a, stride, wa, wb) \
  do {                                                         \
    WEFT_TILE_LOAD(0, a, stride);                              \
    WEFT_TILE_LOAD(1, wa, 32);                                 \
    WEFT_TILE_LOAD(2, wb, 32);                                 \
    WEFT_TILE_ZERO(tca);                                       \
    WEFT_TILE_ZERO(tcb);                                       \
    WEFT_TILE_DPBSUD(tca, 0, 1);                               \
    WEFT_TILE_DPBSUD(tcb, 0, 2);                               \
  } while (0)

namespace weft {
namespace {

constexpr int kTileTokens = 16;

// From this many tokens on, the call's weights are copied into pairs of
// groups (one tile product per unit instead of two); below, the copy cost
// more than it saved (measured before the late tile stores below: 16 tokens
// 1.0-1.3x over avx512vnni with the copy, 1.4x without; 64: 1.5-1.7x with,
// 1.3-1.5x without; bench/amx, docs/performance.md).
constexpr int kPairCopyTokens = 64;
constexpr size_t kUnitStride = 16 + 256;  // group_unit_stride(Q8_0): 8 f16 scales, then 8 chunks x 8 rows x 4
constexpr size_t kPairUnitBytes = 512;    // one unit of a pair copy: 8 chunks x 16 rows x 4

// Units per block: as many as there are C tiles (4-7) for. A block's tile
// products are computed while the previous block's scales are applied, and
// stored only after that: vector loads wait for every tile store before them
// (measured: with the stores issued before the float work, tiles and vectors
// did not overlap at all, bench/amx).
constexpr int kBlockUnitsPaired = 4;   // one C tile per unit
constexpr int kBlockUnitsInPlace = 2;  // two C tiles per unit

template <class T>
T* align64(T* p) {
  return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(p) + 63) & ~static_cast<uintptr_t>(63));
}

// The palette-1 tile configuration (64 bytes, Intel SDM vol. 1 ch. 18).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};  // bytes per row
  uint8_t rows[16] = {};
};

// With the pair copy: two sets of A (tiles 0, 2) and B (1, 3) and four C
// tiles (4-7), used in turn: tiles are not renamed, so a unit that reused the
// last unit's tiles would wait for it. In place: A (0), B (1, 2 for groups a,
// b), C (4, 5 and 6, 7 in turn), each B and C 8 rows wide.
void configure_tiles(bool pair_copy) {
  TileConfig c;
  const int width = pair_copy ? 64 : 32;  // bytes per row of B and C
  for (int a : {0, 2}) c.rows[a] = kTileTokens, c.colsb[a] = 32;  // A: tokens x 32 activation bytes
  for (int b : {1, 3}) c.rows[b] = 8, c.colsb[b] = width;         // B: 8 chunks x (rows x 4 weights)
  if (!pair_copy) c.rows[2] = 8, c.colsb[2] = 32;
  for (int t : {4, 5, 6, 7}) c.rows[t] = kTileTokens, c.colsb[t] = width;  // C: tokens x rows of int32
  WEFT_TILE_CONFIG(&c);
}

// The activations of up to 16 tokens (one A tile): in place, or, for the last
// T % 16 tokens, copied into zero-padded rows so the tile never reads past T.
struct TokenTile {
  const int8_t* q;            // [16][K] at stride K
  const float* scale;         // [16][units]
  const int32_t* offset_sum;  // [16][units]
};

// One unit's scales onto its products c[token][row], in the row-group order.
inline __attribute__((always_inline)) void apply_unit(__m512 (&acc)[kTileTokens], const int32_t* c,
                                                      const uint8_t* scales_a, const uint8_t* scales_b,
                                                      const TokenTile& x, int units, int u) {
  const __m256i h = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales_a))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales_b)), 1);
  const __m512 d = _mm512_cvtph_ps(h);
#pragma GCC unroll 16
  for (int t = 0; t < kTileTokens; ++t) {
    const size_t at = static_cast<size_t>(t) * units + u;
    const __m512i p = _mm512_add_epi32(_mm512_load_si512(c + t * 16), _mm512_set1_epi32(x.offset_sum[at]));
    const __m512 ls = _mm512_mul_ps(d, _mm512_set1_ps(x.scale[at]));
    acc[t] = _mm512_add_ps(acc[t], _mm512_mul_ps(ls, _mm512_cvtepi32_ps(p)));
  }
}

}  // namespace

void quant_groups_amx(WeightType type, float* out, const QuantizedInput& x, const uint8_t* w, const uint8_t* tail,
                      const float* bias, int T, int N, int K, size_t g0, size_t g1) {
  if (type != WeightType::Q8_0) {
    quant_groups_avx512vnni(type, out, x, w, tail, bias, T, N, K, g0, g1);
    return;
  }
  const int units = K / kQuantUnit;
  const size_t group_bytes = kGroupRows * quant_row_bytes(type, K);
  auto group_at = [&](size_t gi) { return (gi + 1) * kGroupRows <= static_cast<size_t>(N) ? w + gi * group_bytes : tail; };

  // The chunk's weights once more, two groups side by side per unit (B tiles
  // of 16 rows: one tile product per unit instead of two); a lone last group
  // is paired with itself and the second half of its outputs dropped. Read
  // back for every token tile, from cache.
  const size_t pairs = (g1 - g0 + 1) / 2;
  const bool copied = T >= kPairCopyTokens;
  std::vector<uint8_t> pair_store(copied ? pairs * units * kPairUnitBytes + 64 : 0);
  uint8_t* const pair_copy = align64(pair_store.data());
  for (size_t p = 0; p < (copied ? pairs : 0); ++p) {
    const uint8_t* ga = group_at(g0 + 2 * p);
    const uint8_t* gb = g0 + 2 * p + 1 < g1 ? group_at(g0 + 2 * p + 1) : ga;
    for (int u = 0; u < units; ++u) {
      uint8_t* to = pair_copy + (p * units + u) * kPairUnitBytes;
      const uint8_t* a = ga + u * kUnitStride + 16;
      const uint8_t* b = gb + u * kUnitStride + 16;
      for (int c = 0; c < 8; ++c) {
        std::memcpy(to + 64 * c, a + 32 * c, 32);
        std::memcpy(to + 64 * c + 32, b + 32 * c, 32);
      }
    }
  }

  // The last T % 16 tokens, zero-padded to a whole tile (their outputs are dropped).
  const int whole = T / kTileTokens * kTileTokens;
  std::vector<int8_t> pad_q;
  std::vector<float> pad_scale;
  std::vector<int32_t> pad_offset;
  if (whole < T) {
    const size_t rest = static_cast<size_t>(T - whole);
    pad_q.assign(static_cast<size_t>(kTileTokens) * K, 0);
    pad_scale.assign(static_cast<size_t>(kTileTokens) * units, 0.0f);
    pad_offset.assign(static_cast<size_t>(kTileTokens) * units, 0);
    std::memcpy(pad_q.data(), x.q + static_cast<size_t>(whole) * K, rest * K);
    std::memcpy(pad_scale.data(), x.scale + static_cast<size_t>(whole) * units, rest * units * sizeof(float));
    std::memcpy(pad_offset.data(), x.offset_sum + static_cast<size_t>(whole) * units, rest * units * sizeof(int32_t));
  }

  configure_tiles(copied);
  // Integer products of two blocks: [block][unit][token][row].
  const int block = copied ? kBlockUnitsPaired : kBlockUnitsInPlace;
  std::vector<int32_t> product_store(2 * kBlockUnitsPaired * kTileTokens * 16 + 16);
  int32_t* const products[2] = {align64(product_store.data()), align64(product_store.data()) + kBlockUnitsPaired * kTileTokens * 16};
  for (size_t p = 0; p < pairs; ++p) {
    const size_t gi = g0 + 2 * p, n = gi * kGroupRows;
    const bool pair = gi + 1 < g1;
    const int rows = std::min(pair ? 2 * kGroupRows : kGroupRows, N - static_cast<int>(n));
    const uint8_t* ga = group_at(gi);  // the scales stay where they are
    const uint8_t* gb = pair ? group_at(gi + 1) : ga;
    const uint8_t* pw = copied ? pair_copy + p * units * kPairUnitBytes : nullptr;
    const __mmask16 keep = rows == 16 ? 0xffff : static_cast<__mmask16>((1u << rows) - 1);
    const __m512 b = bias ? _mm512_maskz_loadu_ps(keep, bias + n) : _mm512_setzero_ps();
    for (int t0 = 0; t0 < T; t0 += kTileTokens) {
      const size_t at0 = static_cast<size_t>(t0) * units;
      const TokenTile tt = t0 < whole ? TokenTile{x.q + static_cast<size_t>(t0) * K, x.scale + at0, x.offset_sum + at0}
                                      : TokenTile{pad_q.data(), pad_scale.data(), pad_offset.data()};
      // The tile products of the block from unit u0 into the C tiles, and
      // from there into `to`. Tile numbers are literal (they are in the opcode).
      auto compute = [&](int u0) {
        const int n_units = std::min(units - u0, block);
        const int8_t* a = tt.q + u0 * kQuantUnit;
        if (!copied) {
          const uint8_t* wa = ga + u0 * kUnitStride + 16;
          const uint8_t* wb = gb + u0 * kUnitStride + 16;
          WEFT_AMX_PRODUCT_IN_PLACE(4, 5, a, K, wa, wb);
          if (n_units > 1) WEFT_AMX_PRODUCT_IN_PLACE(6, 7, a + kQuantUnit, K, wa + kUnitStride, wb + kUnitStride);
          return;
        }
        const uint8_t* wp = pw + u0 * kPairUnitBytes;
        WEFT_AMX_PRODUCT(0, 1, 4, a, K, wp);  // A/B tiles alternate too: they are not renamed either
        if (n_units > 1) WEFT_AMX_PRODUCT(2, 3, 5, a + kQuantUnit, K, wp + kPairUnitBytes);
        if (n_units > 2) WEFT_AMX_PRODUCT(0, 1, 6, a + 2 * kQuantUnit, K, wp + 2 * kPairUnitBytes);
        if (n_units > 3) WEFT_AMX_PRODUCT(2, 3, 7, a + 3 * kQuantUnit, K, wp + 3 * kPairUnitBytes);
      };
      auto store = [&](int u0, int32_t* to) {
        const int n_units = std::min(units - u0, block);
        if (!copied) {
          WEFT_TILE_STORE(4, to, 64);
          WEFT_TILE_STORE(5, to + 8, 64);
          if (n_units > 1) {
            WEFT_TILE_STORE(6, to + 256, 64);
            WEFT_TILE_STORE(7, to + 256 + 8, 64);
          }
          return;
        }
        WEFT_TILE_STORE(4, to, 64);
        if (n_units > 1) WEFT_TILE_STORE(5, to + 256, 64);
        if (n_units > 2) WEFT_TILE_STORE(6, to + 512, 64);
        if (n_units > 3) WEFT_TILE_STORE(7, to + 768, 64);
      };
      __m512 acc[kTileTokens];
      for (auto& a : acc) a = _mm512_setzero_ps();
      // Software pipeline: block k + 1's products are computed while block
      // k's scales are applied, then stored.
      compute(0);
      store(0, products[0]);
      for (int u0 = 0, which = 0; u0 < units; u0 += block, which ^= 1) {
        const bool next = u0 + block < units;
        if (next) compute(u0 + block);
        const int u1 = std::min(units, u0 + block);
        for (int u = u0; u < u1; ++u)
          apply_unit(acc, products[which] + (u - u0) * kTileTokens * 16, ga + u * kUnitStride, gb + u * kUnitStride, tt, units, u);
        if (next) store(u0 + block, products[which ^ 1]);
      }
      const int count = std::min(kTileTokens, T - t0);
#pragma GCC unroll 16
      for (int t = 0; t < kTileTokens; ++t)  // constant indices keep acc in registers
        if (t < count) _mm512_mask_storeu_ps(out + static_cast<size_t>(t0 + t) * N + n, keep, _mm512_add_ps(acc[t], b));
    }
  }
  WEFT_TILE_RELEASE();
}

}  // namespace weft
#endif
