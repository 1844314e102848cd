// Plain C++ stand-ins for the tile instructions quant_amx.cc uses, so that
// bench/amx/run.sh --emulate can check the kernel's logic (pairs, padding,
// offsets, the float order) on a CPU without AMX. Only the instructions'
// documented semantics (Intel SDM: TILELOADD, TDPBSUD, TILESTORED); the real
// instructions are checked by the same harness on an AMX CPU. Not thread-safe
// across threads sharing the emulated registers: each thread has its own.
#pragma once
#include <cstdint>
#include <cstring>

namespace weft_amx_emulated {
struct Tile {
  int rows = 0, colsb = 0;
  uint8_t bytes[16][64] = {};
};
inline thread_local Tile tmm[8];
inline void config(const void* cfg) {
  const uint8_t* c = static_cast<const uint8_t*>(cfg);
  for (int t = 0; t < 8; ++t) {
    uint16_t colsb;
    std::memcpy(&colsb, c + 16 + 2 * t, 2);
    tmm[t].rows = c[48 + t];
    tmm[t].colsb = colsb;
  }
}
inline void load(int t, const void* base, long stride) {
  for (int r = 0; r < tmm[t].rows; ++r) std::memcpy(tmm[t].bytes[r], static_cast<const uint8_t*>(base) + r * stride, tmm[t].colsb);
}
inline void store(int t, void* base, long stride) {
  for (int r = 0; r < tmm[t].rows; ++r) std::memcpy(static_cast<uint8_t*>(base) + r * stride, tmm[t].bytes[r], tmm[t].colsb);
}
inline void zero(int t) { std::memset(tmm[t].bytes, 0, sizeof tmm[t].bytes); }
// dst[m][n] += sum over k of int8 a[m][k] * uint8 b[k / 4][4 n + k % 4]
inline void dpbsud(int dst, int a, int b) {
  for (int m = 0; m < tmm[dst].rows; ++m)
    for (int n = 0; n < tmm[dst].colsb / 4; ++n) {
      int32_t acc;
      std::memcpy(&acc, &tmm[dst].bytes[m][4 * n], 4);
      for (int k = 0; k < tmm[a].colsb; ++k)
        acc += static_cast<int8_t>(tmm[a].bytes[m][k]) * static_cast<int32_t>(tmm[b].bytes[k / 4][4 * n + k % 4]);
      std::memcpy(&tmm[dst].bytes[m][4 * n], &acc, 4);
    }
}
}  // namespace weft_amx_emulated

#define WEFT_TILE_CONFIG(cfg) weft_amx_emulated::config(cfg)
#define WEFT_TILE_LOAD(t, base, stride) weft_amx_emulated::load(t, base, stride)
#define WEFT_TILE_STORE(t, base, stride) weft_amx_emulated::store(t, base, stride)
#define WEFT_TILE_ZERO(t) weft_amx_emulated::zero(t)
#define WEFT_TILE_DPBSUD(dst, a, b) weft_amx_emulated::dpbsud(dst, a, b)
#define WEFT_TILE_RELEASE() ((void)0)
