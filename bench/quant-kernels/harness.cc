// The quantized matmul kernels alone, every kernel set this CPU supports:
// thread CPU time per call (CPU time, not wall time, so that other processes
// on a shared machine disturb it less), GMAC/s, the ratio to a reference
// measured in the same run, and a bit-for-bit comparison across sets.
//
// Part 1 (arithmetic): one thread, N = 3072 rows of K = 1024 (a Qwen3-0.6B
// MLP matrix, which fits in L2/L3), every type, against the baseline set.
// Part 2 (memory-bound shapes, every type): N = 3072..151936 rows, K =
// 1024 / 3072, T = 1, 4, 16, 64 tokens: what weft runs (row groups for
// Q8_0 / Q4_0, k-groups of 16 rows for Q4_K / Q6_K) against the kernel on
// GGUF rows that ran before (the per-row kernel of quant.cc for Q8_0 / Q4_0,
// the super-block row kernel of quant_k.cc for Q4_K / Q6_K), best set.
//
//   bash bench/quant-kernels/run.sh [--quick]     (needs g++ or clang++; no node)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "../../native/src/cpu/base/cpu_features.h"
#include "../../native/src/cpu/kernels/quant/quant.h"
#include "../../native/src/cpu/kernels/quant/quant_formats.h"
#include "../../native/src/cpu/kernels/quant/kquant/quant_k.h"
#include "../../native/src/cpu/kernels/quant/quant_repack.h"
using namespace weft;

static double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static std::vector<uint8_t> random_rows(std::mt19937& rng, WeightType t, int N, int K) {
  const BlockFormat f = block_format(t);
  std::vector<uint8_t> w(static_cast<size_t>(N) * quant_row_bytes(t, K));
  for (auto& b : w) b = rng() & 255;
  for (size_t blk = 0; blk < w.size(); blk += f.bytes) {
    auto put = [&](size_t at) {
      uint16_t h = f32_to_f16((rng() % 2 ? 1 : -1) * (0.001f + (rng() % 1000) * 2e-5f));
      memcpy(&w[blk + at], &h, 2);
    };
    if (t == WeightType::Q6_K) put(208);
    else put(0);
    if (t == WeightType::Q4_K) put(2);
  }
  return w;
}

// As weft stores it: Q8_0 / Q4_0 in row groups, Q4_K / Q6_K in k-groups.
static std::vector<uint8_t> stored(WeightType t, std::vector<uint8_t> w, int N, int K) {
  if (is_k_quant(t)) {
    std::vector<uint8_t> groups(kgroup_matrix_bytes(t, N, K));
    pack_kgroups(t, w.data(), N, K, groups.data());
    return groups;
  }
  if (is_row_grouped(t)) repack_rows(t, w.data(), N, K);
  return w;
}

// What weft runs (k-quants straight to kquant_matmul: quant_matmul_with asks
// CPUID on every call, which this VM traps for ~14 us).
static bool new_kernel(KernelSet s, ThreadPool& pool, float* out, const float* x, const uint8_t* w, WeightType t, int T, int N,
                       int K) {
  if (is_k_quant(t)) return kquant_matmul(s, pool, out, x, w, t, nullptr, T, N, K);
  return quant_matmul_with(s, pool, out, x, w, t, nullptr, T, N, K);
}

// What ran before on GGUF rows.
static bool old_kernel(KernelSet s, ThreadPool& pool, float* out, const float* x, const uint8_t* rows, WeightType t, int T,
                       int N, int K) {
  if (is_k_quant(t)) return kquant_matmul_gguf_rows(s, pool, out, x, rows, t, nullptr, T, N, K);
  return quant_matmul_gguf_rows_with(s, pool, out, x, rows, t, nullptr, T, N, K);
}

// Median of `runs` timings of `reps` calls, in microseconds of thread CPU time per call.
template <class F>
static double time_us(F&& call, int reps, int runs = 3) {
  std::vector<double> v;
  for (int r = 0; r < runs; ++r) {
    const double t0 = cpu_now();
    for (int i = 0; i < reps; ++i) call();
    v.push_back((cpu_now() - t0) / reps);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Medians of `runs` alternating timings of a and b (old, new): the machine's
// load moves both alike. Microseconds of thread CPU time per call.
template <class A, class B>
static void time_pair(A&& a, B&& b, int reps, double* a_us, double* b_us, int runs = 5) {
  std::vector<double> va, vb;
  for (int r = 0; r < runs; ++r) {
    double t0 = cpu_now();
    for (int i = 0; i < reps; ++i) a();
    va.push_back((cpu_now() - t0) / reps);
    t0 = cpu_now();
    for (int i = 0; i < reps; ++i) b();
    vb.push_back((cpu_now() - t0) / reps);
  }
  std::sort(va.begin(), va.end());
  std::sort(vb.begin(), vb.end());
  *a_us = va[va.size() / 2];
  *b_us = vb[vb.size() / 2];
}

int main(int argc, char** argv) {
  bool quick = false, k_only = false;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    if (strcmp(argv[i], "--k") == 0) k_only = true;  // Q4_K and Q6_K only
  }
  std::mt19937 rng(1);
  ThreadPool pool(1);
  const WeightType types[] = {WeightType::Q8_0, WeightType::Q4_0, WeightType::Q4_K, WeightType::Q6_K};
  const char* names[] = {"Q8_0", "Q4_0", "Q4_K", "Q6_K"};
  const KernelSet sets[] = {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni};
  const KernelSet best = cpu_best_kernel_set();
  printf("best set: %s\n", kernel_set_name(best));
  int failures = 0;

  printf("\n1. N = 3072, K = 1024, one thread (weights in L2/L3): every set against the baseline\n");
  for (int ti = k_only ? 2 : 0; ti < 4; ++ti) {
    const WeightType t = types[ti];
    const int N = 3072, K = 1024;
    const std::vector<uint8_t> w = stored(t, random_rows(rng, t, N, K), N, K);
    for (int T : {1, 3, 16}) {
      std::vector<float> x(T * K), base(T * N), out(T * N);
      for (auto& v : x) v = (rng() % 20001 - 10000) * 1e-4f;
      new_kernel(KernelSet::Baseline, pool, base.data(), x.data(), w.data(), t, T, N, K);
      double baseline_us = 0;
      for (KernelSet s : sets) {
        if (!cpu_supports(s)) continue;
        const int reps = s == KernelSet::Baseline ? (T == 1 ? 5 : 2) : (T == 1 ? 200 : 30);
        const double us = time_us([&] { new_kernel(s, pool, out.data(), x.data(), w.data(), t, T, N, K); },
                                  quick ? 1 : reps, quick ? 1 : 3);
        const bool same = memcmp(out.data(), base.data(), out.size() * 4) == 0;
        failures += !same;
        if (s == KernelSet::Baseline) baseline_us = us;
        printf("%s T=%2d %-10s %9.1f us  %6.2f GMAC/s  x%6.1f vs baseline  %s\n", names[ti], T, kernel_set_name(s), us,
               double(T) * N * K / us / 1e3, baseline_us / us, same ? "== baseline" : "DIFFERS");
      }
    }
  }

  printf("\n2. memory-bound shapes, one thread, %s: row groups / k-groups (new) vs the kernels on GGUF rows (old: per-row\n"
         "   for Q8_0 / Q4_0, super-block rows with the scalar quantizer for Q4_K / Q6_K)\n",
         kernel_set_name(best));
  printf("   every supported set checked against the baseline bit for bit; thread CPU ms per call, median of 5 alternating runs\n");
  printf("| type | N x K | T | old ms | new ms | new GMAC/s | new GB/s of weights | old / new |\n|---|---|---|---|---|---|---|---|\n");
  struct Shape { int N, K; };
  const Shape shapes[] = {{3072, 1024}, {1024, 3072}, {4096, 1024}, {151936, 1024}};
  for (int ti = k_only ? 2 : 0; ti < 4; ++ti) {
    const WeightType t = types[ti];
    for (const Shape& sh : shapes) {
      if (quick && sh.N > 4096) continue;
      const int N = sh.N, K = sh.K;
      const std::vector<uint8_t> rows = random_rows(rng, t, N, K);
      const std::vector<uint8_t> grouped = stored(t, rows, N, K);
      for (int T : {1, 4, 16, 64}) {
        std::vector<float> x(static_cast<size_t>(T) * K), base(static_cast<size_t>(T) * N), out(base.size());
        for (auto& v : x) v = (rng() % 20001 - 10000) * 1e-4f;
        // Bit-for-bit across sets (the baseline is slow: only on the smaller shapes).
        if (static_cast<double>(T) * N * K <= 2.1e8) {
          new_kernel(KernelSet::Baseline, pool, base.data(), x.data(), grouped.data(), t, T, N, K);
          for (KernelSet s : sets) {
            if (s == KernelSet::Baseline || !cpu_supports(s)) continue;
            new_kernel(s, pool, out.data(), x.data(), grouped.data(), t, T, N, K);
            if (memcmp(out.data(), base.data(), out.size() * 4) != 0) {
              printf("%s %dx%d T=%d %s DIFFERS from baseline\n", names[ti], N, K, T, kernel_set_name(s));
              ++failures;
            }
          }
        }
        const double macs = static_cast<double>(T) * N * K;
        const int reps = std::max(1, static_cast<int>((quick ? 2e8 : 2e9) / macs));
        double old_us, new_us;
        time_pair([&] { old_kernel(best, pool, out.data(), x.data(), rows.data(), t, T, N, K); },
                  [&] { new_kernel(best, pool, out.data(), x.data(), grouped.data(), t, T, N, K); }, reps,
                  &old_us, &new_us, quick ? 1 : 5);
        printf("| %s | %d x %d | %d | %.3f | %.3f | %.1f | %.1f | %.2fx |\n", names[ti], N, K, T, old_us / 1e3, new_us / 1e3,
               macs / new_us / 1e3, grouped.size() / new_us / 1e3, old_us / new_us);
      }
    }
  }
  printf("%s\n", failures ? "FAILURES" : "all sets bit-identical to baseline");
  return failures != 0;
}
