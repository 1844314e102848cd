// The float-weight (F32/F16/BF16) matmul kernels alone, every kernel set this
// CPU supports, old (avx2: what every set above baseline ran before) against
// new (avx512vnni: the AVX-512 kernels), measured in alternating rounds:
// thread CPU time per call (one thread: a shared machine disturbs CPU time far
// less than wall time), GMAC/s, GB/s of weights read, and the ratio
// avx512 / avx2. Checks that avx512 equals avx2 bit for bit and says how far
// the baseline (no FMA) is from them.
//
// Shapes: a cache-resident one (N 3072, K 1024) and memory-bound ones (the
// Qwen3-0.6B LM head, N 151936 x K 1024, and an FFN-sized N 32768 x K 3072),
// at 1, 4, 16 and 64 tokens.
//
//   sh bench/float-kernels/run.sh            (needs g++ or clang++; no node)
//   sh bench/float-kernels/run.sh --quick    (small shapes only)
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../native/src/cpu/base/cpu_features.h"
#include "../../native/src/cpu/base/half.h"
#include "../../native/src/cpu/kernels/matmul.h"
using namespace weft;

static double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  // --only TYPE N K T: one case (for tuning), e.g. --only F16 151936 1024 1
  const bool only = argc > 5 && std::string(argv[1]) == "--only";
  const std::string only_type = only ? argv[2] : "";
  const int only_n = only ? atoi(argv[3]) : 0, only_k = only ? atoi(argv[4]) : 0, only_t = only ? atoi(argv[5]) : 0;
  std::mt19937 rng(1);
  ThreadPool pool(1);
  const CpuFlags flags = cpu_flags();
  printf("best set: %s; CPU flags: %s\n", kernel_set_name(cpu_best_kernel_set()), cpu_flag_names(flags).c_str());
  const KernelSet old_set = KernelSet::Avx2, new_set = KernelSet::Avx512Vnni;
  if (!cpu_supports(old_set) || !cpu_supports(new_set)) {
    printf("this CPU or build cannot run both the avx2 and the avx512vnni kernels: nothing to compare\n");
    return 0;
  }
  struct Shape { int N, K; };
  std::vector<Shape> shapes = {{3072, 1024}};
  if (!quick) shapes.push_back({151936, 1024}), shapes.push_back({32768, 3072});
  if (only) shapes = {{only_n, only_k}};
  const WeightType types[] = {WeightType::F16, WeightType::BF16, WeightType::F32};
  const char* names[] = {"F16", "BF16", "F32"};
  int failures = 0;
  printf("%-5s %6s %5s %3s | %10s %10s | %7s %7s | %6s %6s | %s\n", "type", "N", "K", "T", "avx2 us", "avx512 us",
         "GMAC/s", "GMAC/s", "GB/s", "GB/s", "avx512/avx2 speed, exactness");
  for (const Shape sh : shapes) {
    for (int ti = 0; ti < 3; ++ti) {
      const WeightType type = types[ti];
      if (only && only_type != names[ti]) continue;
      const size_t elem = type == WeightType::F32 ? 4 : 2;
      const size_t count = static_cast<size_t>(sh.N) * sh.K;
      std::vector<float> wf;
      std::vector<uint16_t> wh;
      std::normal_distribution<float> normal(0.0f, 0.05f);
      if (type == WeightType::F32) {
        wf.resize(count);
        for (auto& v : wf) v = normal(rng);
      } else {
        wh.resize(count);
        for (auto& v : wh) {
          const float f = normal(rng);
          v = type == WeightType::F16 ? f32_to_f16(f) : static_cast<uint16_t>(float_to_bits(f) >> 16);
        }
      }
      const void* w = type == WeightType::F32 ? static_cast<const void*>(wf.data()) : wh.data();
      for (int T : {1, 4, 16, 64}) {
        if (only) T = only_t;
        const int K = sh.K, N = sh.N;
        std::vector<float> x(static_cast<size_t>(T) * K), bias(N);
        for (auto& v : x) v = normal(rng) * 20;
        for (auto& v : bias) v = normal(rng);
        std::vector<float> out_old(static_cast<size_t>(T) * N), out_new(out_old.size());
        // Rounds alternate old and new; each round runs >= ~0.2 s of CPU (at least one call).
        std::vector<double> us_old, us_new;
        const double macs = static_cast<double>(T) * N * K;
        const int reps = std::max(1, static_cast<int>(2e5 / (macs / 2e4 + static_cast<double>(count) * elem / 1.5e4)));
        for (int round = 0; round < 3; ++round)
          for (int which = 0; which < 2; ++which) {
            const KernelSet s = which ? new_set : old_set;
            float* out = which ? out_new.data() : out_old.data();
            const double t0 = cpu_now();
            for (int r = 0; r < reps; ++r) matmul_with(s, pool, out, x.data(), w, type, bias.data(), T, N, K);
            (which ? us_new : us_old).push_back((cpu_now() - t0) / reps);
          }
        const double a = median(us_old), b = median(us_new);
        const bool same = std::memcmp(out_old.data(), out_new.data(), out_old.size() * 4) == 0;
        failures += !same;
        // The baseline, once, on the small shape: how far it is from the FMA kernels.
        std::string base_note;
        if (sh.N == 3072) {
          std::vector<float> out_base(out_old.size());
          matmul_with(KernelSet::Baseline, pool, out_base.data(), x.data(), w, type, bias.data(), T, N, K);
          double worst = 0;
          for (size_t i = 0; i < out_base.size(); ++i)
            worst = std::max(worst, std::fabs(static_cast<double>(out_base[i]) - out_old[i]) / (1.0 + std::fabs(out_old[i])));
          char buf[64];
          snprintf(buf, sizeof buf, "; baseline within %.1e", worst);
          base_note = buf;
        }
        printf("%-5s %6d %5d %3d | %10.1f %10.1f | %7.2f %7.2f | %6.1f %6.1f | x%.2f, %s%s\n", names[ti], N, K, T, a, b,
               macs / a / 1e3, macs / b / 1e3, count * elem / a / 1e3, count * elem / b / 1e3, a / b,
               same ? "avx512 == avx2 bit for bit" : "DIFFERS from avx2", base_note.c_str());
        fflush(stdout);
        if (only) break;
      }
    }
  }
  printf("%s\n", failures ? "FAILURES: avx512 differs from avx2" : "avx512 bit-identical to avx2 everywhere");
  return failures != 0;
}
