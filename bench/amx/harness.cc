// The AMX-INT8 Q8_0 kernel (native/src/cpu/kernels/quant/amx/quant_amx.h) on a CPU that has AMX:
// first that its outputs equal the avx512vnni, avx2 and baseline kernels' bit
// for bit on random weights (several T / N / K, tails of tokens, rows and
// groups, with and without bias, 1 and 3 threads); then the time per matmul
// (activation quantization included, as in a model step) of amx, avx512vnni
// and avx2 at the Qwen3-0.6B shapes, in alternating rounds, medians.
//
//   sh bench/amx/run.sh            (needs g++; no node)
//   sh bench/amx/run.sh --quick    (fewer checks, timings on one thread only)
//   sh bench/amx/run.sh --emulate  (any AVX-512 CPU: the tiles in plain C++, checks only)
// Exit status 1 when any output differs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../native/src/cpu/base/cpu_features.h"
#include "../../native/src/cpu/kernels/quant/quant.h"
#include "../../native/src/cpu/kernels/quant/quant_formats.h"
#include "../../native/src/cpu/kernels/quant/quant_repack.h"
#include "../../native/src/cpu/base/thread_pool.h"
using namespace weft;

namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Q8_0 weights of N rows x K in row groups (as weft keeps them after load).
std::vector<uint8_t> random_weights(std::mt19937& rng, int N, int K) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  const size_t row_bytes = quant_row_bytes(WeightType::Q8_0, K);
  std::vector<uint8_t> w(static_cast<size_t>(N) * row_bytes);
  std::vector<float> row(K);
  for (int n = 0; n < N; ++n) {
    const float gain = 1.0f + (n % 7);  // rows of different scales
    for (auto& v : row) v = normal(rng) * gain;
    quantize_row(WeightType::Q8_0, row.data(), w.data() + n * row_bytes, K);
  }
  repack_rows(WeightType::Q8_0, w.data(), N, K);
  return w;
}

// Activations with a few large values among small ones (as a model's are).
std::vector<float> random_input(std::mt19937& rng, int T, int K) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(T) * K);
  for (size_t i = 0; i < x.size(); ++i) x[i] = normal(rng) * (i % 97 == 0 ? 20.0f : 1.0f);
  return x;
}

using Run = bool (*)(ThreadPool&, float*, const float*, const uint8_t*, const float*, int, int, int);

bool run_set(KernelSet set, ThreadPool& pool, float* out, const float* in, const uint8_t* w, const float* bias, int T, int N,
             int K) {
  return quant_matmul_with(set, pool, out, in, w, WeightType::Q8_0, bias, T, N, K);
}

bool run_amx(ThreadPool& pool, float* out, const float* in, const uint8_t* w, const float* bias, int T, int N, int K) {
  return quant_matmul_amx_with(pool, out, in, w, WeightType::Q8_0, bias, T, N, K);
}

int check(bool quick) {
  std::mt19937 rng(7);
  const std::vector<int> Ks = quick ? std::vector<int>{32, 96, 1024} : std::vector<int>{32, 96, 1024, 3072};
  const std::vector<int> Ns = quick ? std::vector<int>{13, 40} : std::vector<int>{8, 13, 24, 40, 1003};
  // (64 and 70: the pair-copy path, kPairCopyTokens in quant_amx.cc)
  const std::vector<int> Ts = quick ? std::vector<int>{16, 33, 70} : std::vector<int>{1, 15, 16, 17, 33, 64, 100};
  int cases = 0, failures = 0, baseline_cases = 0;
  for (int K : Ks)
    for (int N : Ns)
      for (int T : Ts)
        for (int threads : {1, 3}) {
          const bool with_bias = (N + T + threads) % 2 == 0;
          const std::vector<uint8_t> w = random_weights(rng, N, K);
          const std::vector<float> x = random_input(rng, T, K);
          std::vector<float> bias(N);
          for (auto& b : bias) b = std::normal_distribution<float>(0.0f, 0.5f)(rng);
          const float* bp = with_bias ? bias.data() : nullptr;
          ThreadPool pool(threads);
          const size_t outs = static_cast<size_t>(T) * N;
          std::vector<float> amx(outs, NAN), ref(outs, NAN);
          if (!run_amx(pool, amx.data(), x.data(), w.data(), bp, T, N, K)) return -1;
          struct Peer { KernelSet set; bool run; };
          const bool small = static_cast<double>(T) * N * K <= 4e6;
          for (const Peer p : {Peer{KernelSet::Avx512Vnni, true}, Peer{KernelSet::Avx2, true}, Peer{KernelSet::Baseline, small}}) {
            if (!p.run) continue;
            std::fill(ref.begin(), ref.end(), NAN);
            if (!run_set(p.set, pool, ref.data(), x.data(), w.data(), bp, T, N, K)) continue;
            if (p.set == KernelSet::Baseline) ++baseline_cases;
            if (std::memcmp(amx.data(), ref.data(), outs * sizeof(float)) != 0) {
              size_t first = 0, differing = 0;
              for (size_t i = outs; i-- > 0;)
                if (std::memcmp(&amx[i], &ref[i], sizeof(float)) != 0) first = i, ++differing;
              printf("DIFFERS from %s: T %d N %d K %d threads %d bias %d: %zu of %zu outputs, first [t %zu][n %zu] amx %.9g vs %.9g\n",
                     kernel_set_name(p.set), T, N, K, threads, with_bias, differing, outs, first / N, first % N, amx[first],
                     ref[first]);
              ++failures;
            }
          }
          ++cases;
        }
  printf("bit-identity: %d cases (T %s, N %s, K %s; 1 and 3 threads), amx vs avx512vnni and avx2 in each, vs baseline in %d: %s\n",
         cases, quick ? "16,33,70" : "1,15,16,17,33,64,100", quick ? "13,40" : "8,13,24,40,1003",
         quick ? "32,96,1024" : "32,96,1024,3072", baseline_cases, failures ? "DIFFERENCES (above)" : "all bit-identical");
  return failures;
}

void timing(bool quick, int threads) {
  struct Shape { int N, K; const char* what; };
  std::vector<Shape> shapes = {{1024, 1024, "q/o_proj-like"}, {3072, 1024, "gate/up_proj"}, {1024, 3072, "down_proj"}};
  std::vector<int> Ts = {16, 64, 512};
  std::mt19937 rng(11);
  ThreadPool pool(threads);
  struct Kernel { const char* name; KernelSet set; bool amx; };
  const Kernel kernels[] = {{"amx", KernelSet::Avx512Vnni, true}, {"avx512vnni", KernelSet::Avx512Vnni, false}, {"avx2", KernelSet::Avx2, false}};
  printf("\n%d thread(s); wall ms per matmul (activation quantization included), median of 7 alternating rounds\n", threads);
  printf("| N x K | T | amx ms | avx512vnni ms | avx2 ms | amx GMAC/s | amx vs avx512vnni | amx vs avx2 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Shape sh : shapes) {
    const std::vector<uint8_t> w = random_weights(rng, sh.N, sh.K);
    for (int T : Ts) {
      const std::vector<float> x = random_input(rng, T, sh.K);
      std::vector<float> out(static_cast<size_t>(T) * sh.N);
      const double macs = static_cast<double>(T) * sh.N * sh.K;
      // Calls per round: about 30 ms of the slowest kernel (avx2 at ~20 GMAC/s per thread).
      const int reps = std::max(1, static_cast<int>(30e-3 * 20e9 * threads / macs));
      std::vector<double> ms[3];
      for (int round = 0; round < 8; ++round)
        for (int k = 0; k < 3; ++k) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int r = 0; r < reps; ++r) {
            if (kernels[k].amx) run_amx(pool, out.data(), x.data(), w.data(), nullptr, T, sh.N, sh.K);
            else run_set(kernels[k].set, pool, out.data(), x.data(), w.data(), nullptr, T, sh.N, sh.K);
          }
          const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
          if (round > 0) ms[k].push_back(t);  // round 0 warms caches and the tile state
        }
      const double a = median(ms[0]), v = median(ms[1]), a2 = median(ms[2]);
      printf("| %d x %d | %d | %.3f | %.3f | %.3f | %.0f | %.2fx | %.2fx |\n", sh.N, sh.K, T, a, v, a2, macs / a / 1e6, v / a, a2 / a);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  printf("CPU: %s (%u logical CPUs); CPUID: %s\n", cpu_model().c_str(), std::thread::hardware_concurrency(),
         cpu_flag_names(cpu_flags()).c_str());
  const AmxStatus amx = cpu_amx_status();
  printf("AMX: %s (%s); best set %s\n", amx.usable ? "usable" : "NOT usable", amx.reason.c_str(),
         kernel_set_name(cpu_best_kernel_set()));
  if (!amx.usable || !cpu_supports(KernelSet::Avx512Vnni)) {
    printf("nothing to check or time without AMX and avx512vnni\n");
    return 0;
  }
  const int failures = check(quick);
  if (failures < 0) {
    printf("the AMX kernel refused to run\n");
    return 1;
  }
  if (amx.reason.find("EMULATED") != std::string::npos) return failures ? 1 : 0;  // times nothing
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  timing(quick, 1);
  if (!quick && cores > 1) timing(quick, std::min(cores, 16));
  return failures ? 1 : 0;
}
