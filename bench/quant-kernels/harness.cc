// The quantized matmul kernels alone, every kernel set this CPU supports:
// thread CPU time per call (CPU time, not wall time, so that other processes
// on a shared machine disturb it less), GMAC/s, the ratio to the baseline
// kernel measured in the same run, and a bit-for-bit comparison with it.
// One thread; N = 3072 rows of K = 1024 (a Qwen3-0.6B MLP matrix, which fits
// in L2/L3: this measures the kernels' arithmetic, not memory bandwidth).
//
//   bash bench/quant-kernels/run.sh      (needs g++ or clang++; no node)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "../../native/src/cpu/cpu_features.h"
#include "../../native/src/cpu/quant.h"
#include "../../native/src/cpu/quant_formats.h"
using namespace weft;
#include <time.h>
static double cpu_now() { timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3; }
int main() {
  std::mt19937 rng(1);
  ThreadPool pool(1);
  const WeightType types[] = {WeightType::Q8_0, WeightType::Q4_0, WeightType::Q4_K, WeightType::Q6_K};
  const char* names[] = {"Q8_0", "Q4_0", "Q4_K", "Q6_K"};
  const KernelSet sets[] = {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni};
  printf("best set: %s\n", kernel_set_name(cpu_best_kernel_set()));
  int failures = 0;
  for (int ti = 0; ti < 4; ++ti) {
    const WeightType t = types[ti];
    const int N = 3072, K = 1024;
    const BlockFormat f = block_format(t);
    std::vector<uint8_t> w(N * quant_row_bytes(t, K));
    for (auto& b : w) b = rng() & 255;
    for (size_t blk = 0; blk < w.size(); blk += f.bytes) {
      auto put = [&](size_t at) { uint16_t h = f32_to_f16((rng() % 2 ? 1 : -1) * (0.001f + (rng() % 1000) * 2e-5f)); memcpy(&w[blk + at], &h, 2); };
      if (t == WeightType::Q6_K) put(208); else put(0);
      if (t == WeightType::Q4_K) put(2);
    }
    for (int T : {1, 3, 16}) {
      std::vector<float> x(T * K), base(T * N), out(T * N);
      for (auto& v : x) v = (rng() % 20001 - 10000) * 1e-4f;
      quant_matmul_with(KernelSet::Baseline, pool, base.data(), x.data(), w.data(), t, nullptr, T, N, K);
      double baseline_us = 0;
      for (KernelSet s : sets) {
        if (!cpu_supports(s)) continue;
        auto t0 = cpu_now();
        int reps = T == 1 ? 200 : 30;
        for (int r = 0; r < reps; ++r) quant_matmul_with(s, pool, out.data(), x.data(), w.data(), t, nullptr, T, N, K);
        double us = (cpu_now() - t0) / reps;
        bool same = memcmp(out.data(), base.data(), out.size() * 4) == 0;
        failures += !same;
        if (s == KernelSet::Baseline) baseline_us = us;
        printf("%s T=%2d %-10s %8.1f us  %6.2f GMAC/s  x%5.1f vs baseline  %s\n", names[ti], T, kernel_set_name(s), us,
               double(T) * N * K / us / 1e3, baseline_us / us, same ? "== baseline" : "DIFFERS");
      }
    }
  }
  printf("%s\n", failures ? "FAILURES" : "all sets bit-identical to baseline");
  return failures != 0;
}
