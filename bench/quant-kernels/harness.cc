// The quantized matmul kernels alone, every kernel set this CPU supports:
// thread CPU time per call (CPU time, not wall time, so that other processes
// on a shared machine disturb it less), GMAC/s, the ratio to the baseline
// kernel measured in the same run, and a bit-for-bit comparison with it.
// One thread. Shapes:
//  - N = 3072 rows of K = 1024 (a Qwen3-0.6B MLP matrix, which fits in L2/L3:
//    the kernels' arithmetic, not memory bandwidth), every format;
//  - memory-bound ones for Q4_K / Q6_K (the k-quants of Q4_K_M files):
//    N = 1024 x K = 3072 (ffn_down) and N = 151936 x K = 1024 (the output
//    matrix, 87-127 MB), weights streaming from memory as in a decode step.
//
//   bash bench/quant-kernels/run.sh [quick]     (needs g++ or clang++; no node)
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

struct Shape { int N, K; std::vector<int> tokens; bool all_formats; };

int main(int argc, char** argv) {
  const bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  std::mt19937 rng(1);
  ThreadPool pool(1);
  const WeightType types[] = {WeightType::Q8_0, WeightType::Q4_0, WeightType::Q4_K, WeightType::Q6_K};
  const char* names[] = {"Q8_0", "Q4_0", "Q4_K", "Q6_K"};
  const KernelSet sets[] = {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni};
  printf("best set: %s\n", kernel_set_name(cpu_best_kernel_set()));
  std::vector<Shape> shapes = {{3072, 1024, {1, 4, 16, 64}, true}};
  if (!quick) shapes.push_back({1024, 3072, {1, 4, 16, 64}, false}), shapes.push_back({151936, 1024, {1, 16}, false});
  int failures = 0;
  for (const Shape& sh : shapes)
    for (int ti = 0; ti < 4; ++ti) {
      const WeightType t = types[ti];
      if (!sh.all_formats && t != WeightType::Q4_K && t != WeightType::Q6_K) continue;
      const int N = sh.N, K = sh.K;
      const BlockFormat f = block_format(t);
      std::vector<uint8_t> w(size_t(N) * quant_row_bytes(t, K));
      for (auto& b : w) b = rng() & 255;
      for (size_t blk = 0; blk < w.size(); blk += f.bytes) {
        auto put = [&](size_t at) { uint16_t h = f32_to_f16((rng() % 2 ? 1 : -1) * (0.001f + (rng() % 1000) * 2e-5f)); memcpy(&w[blk + at], &h, 2); };
        if (t == WeightType::Q6_K) put(208); else put(0);
        if (t == WeightType::Q4_K) put(2);
      }
      const double macs_per_rep = double(N) * K;
      for (int T : sh.tokens) {
        std::vector<float> x(size_t(T) * K), base(size_t(T) * N), out(size_t(T) * N);
        for (auto& v : x) v = (rng() % 20001 - 10000) * 1e-4f;
        double baseline_us = 0;
        {
          auto t0 = cpu_now();
          quant_matmul_with(KernelSet::Baseline, pool, base.data(), x.data(), w.data(), t, nullptr, T, N, K);
          baseline_us = cpu_now() - t0;
        }
        for (KernelSet s : sets) {
          if (!cpu_supports(s)) continue;
          double us = baseline_us;
          bool same = true;
          if (s != KernelSet::Baseline) {
            // ~0.3 s of work per measurement (at ~20 GMAC/s), at least 3 calls.
            const int reps = std::max(3, int(6e9 / (macs_per_rep * T)) / (quick ? 4 : 1));
            quant_matmul_with(s, pool, out.data(), x.data(), w.data(), t, nullptr, T, N, K);
            same = memcmp(out.data(), base.data(), out.size() * 4) == 0;
            auto t0 = cpu_now();
            for (int r = 0; r < reps; ++r) quant_matmul_with(s, pool, out.data(), x.data(), w.data(), t, nullptr, T, N, K);
            us = (cpu_now() - t0) / reps;
          }
          failures += !same;
          printf("%s N=%6d K=%4d T=%2d %-10s %10.1f us  %6.2f GMAC/s  x%5.1f vs baseline  %s\n", names[ti], N, K, T,
                 kernel_set_name(s), us, double(T) * macs_per_rep / us / 1e3, baseline_us / us, same ? "== baseline" : "DIFFERS");
        }
      }
    }
  printf("%s\n", failures ? "FAILURES" : "all sets bit-identical to baseline");
  return failures != 0;
}
