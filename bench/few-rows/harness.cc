// The weight matmuls of one Qwen3-0.6B forward pass (28 layers of q/k/v,
// o, gate/up and down, then the tied LM head; ~1.1 GB of F16, ~0.6 GB of
// Q8_0, so the weights stream from memory as in a real decode step) at
// T = 1, 2, 3, 4, 5, 8 tokens: what a verify step of T - 1 draft tokens pays
// in matmuls against a one-token step (docs/speculative.md). A step of T
// tokens reads every weight once, like a one-token step; what it adds is
// compute, and the ratio shows whether the few-row kernels hide it under the
// memory stream.
//
// The whole pass's time (1 thread: its CPU time; 2 threads: wall time),
// rounds alternating the sizes, medians; and whether each T's outputs equal the T = 1 outputs row for row
// (every output is summed in one order whatever T is: matmul.h).
//
//   npm run bench:few-rows [-- --types F16,Q8_0 --rounds N]
//   (the kernels are the CPU's best set; WEFT_KERNELS=avx2 forces AVX2)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../native/src/cpu/base/cpu_features.h"
#include "../../native/src/cpu/base/half.h"
#include "../../native/src/cpu/kernels/float/sextets.h"
#include "../../native/src/cpu/kernels/matmul.h"
#include "../../native/src/cpu/kernels/quant/quant.h"
#include "../../native/src/cpu/kernels/quant/quant_formats.h"
#include "../../native/src/cpu/kernels/quant/quant_repack.h"
using namespace weft;

namespace {

constexpr int H = 1024, Q = 2048, KV = 1024, FFN = 3072, VOCAB = 151936, LAYERS = 28;
const int kSizes[] = {1, 2, 3, 4, 5, 8};
constexpr int kMaxT = 8;

// One thread: its CPU time (memory stalls included; a shared machine's other
// processes move it far less than wall time). Two threads: wall time.
double now_ms(int threads) {
  timespec ts;
  clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// One N x K matrix as weft stores it: F16 in sextets, Q8_0 in row groups.
struct Matrix {
  std::vector<uint8_t> bytes;
  int N, K;
};

Matrix make_matrix(std::mt19937& rng, WeightType type, int N, int K) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  Matrix m{{}, N, K};
  if (type == WeightType::F16) {
    std::vector<uint16_t> h(static_cast<size_t>(N) * K);
    for (auto& v : h) v = f32_to_f16(normal(rng));
    std::vector<uint16_t> scratch;
    to_sextets(h.data(), K, 0, static_cast<size_t>(N) / kSextetRows, scratch);
    m.bytes.resize(h.size() * 2);
    std::memcpy(m.bytes.data(), h.data(), m.bytes.size());
  } else {
    const size_t row_bytes = quant_row_bytes(type, K);
    m.bytes.resize(static_cast<size_t>(N) * row_bytes);
    std::vector<float> row(K);
    for (int n = 0; n < N; ++n) {
      for (auto& v : row) v = normal(rng);
      quantize_row(type, row.data(), m.bytes.data() + n * row_bytes, K);
    }
    repack_rows(type, m.bytes.data(), N, K);
  }
  return m;
}

// The forward pass's matrices, grouped as weft projects them (one project()
// call per group: q/k/v together, gate/up together).
struct Pass {
  WeightType type;
  std::vector<std::vector<Matrix>> groups;  // per call, its parts
  std::vector<std::vector<float>> outs;     // per call, per part: [kMaxT][N]
};

Pass make_pass(WeightType type) {
  std::mt19937 rng(7);
  Pass pass{type, {}, {}};
  for (int l = 0; l < LAYERS; ++l) {
    pass.groups.push_back({make_matrix(rng, type, Q, H), make_matrix(rng, type, KV, H), make_matrix(rng, type, KV, H)});
    pass.groups.push_back({make_matrix(rng, type, H, Q)});
    pass.groups.push_back({make_matrix(rng, type, FFN, H), make_matrix(rng, type, FFN, H)});
    pass.groups.push_back({make_matrix(rng, type, H, FFN)});
  }
  pass.groups.push_back({make_matrix(rng, type, VOCAB, H)});
  return pass;
}

// Every call of the pass on T rows of `x` (rows of the widest K), outputs kept per call.
void run_pass(ThreadPool& pool, MatmulScratch& scratch, const Pass& pass, const float* x, int T,
              std::vector<std::vector<float>>& outs) {
  outs.resize(pass.groups.size());
  for (size_t g = 0; g < pass.groups.size(); ++g) {
    const auto& parts = pass.groups[g];
    size_t total = 0;
    for (const Matrix& m : parts) total += static_cast<size_t>(T) * m.N;
    outs[g].resize(total);
    MatmulPart mp[kMaxMatmulParts];
    size_t at = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      mp[p] = MatmulPart{};
      mp[p].out = outs[g].data() + at;
      mp[p].w = parts[p].bytes.data();
      mp[p].type = pass.type;
      mp[p].N = parts[p].N;
      mp[p].sextets = pass.type == WeightType::F16;
      at += static_cast<size_t>(T) * parts[p].N;
    }
    project(pool, scratch, x, T, parts[0].K, mp, static_cast<int>(parts.size()));
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string types = "F16,Q8_0";
  int rounds = 5;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--types") == 0) types = argv[i + 1];
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  }
  printf("kernel set: %s; CPU flags: %s\n", kernel_set_name(cpu_kernel_set()), cpu_flag_names(cpu_flags()).c_str());
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(kMaxT) * FFN);
  for (auto& v : x) v = normal(rng);
  int failures = 0;
  for (const char* name : {"F16", "Q8_0"}) {
    if (types.find(name) == std::string::npos) continue;
    const WeightType type = std::strcmp(name, "F16") == 0 ? WeightType::F16 : WeightType::Q8_0;
    const Pass pass = make_pass(type);
    size_t bytes = 0;
    for (const auto& g : pass.groups)
      for (const Matrix& m : g) bytes += m.bytes.size();
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      MatmulScratch scratch;
      std::vector<std::vector<float>> one, out;
      run_pass(pool, scratch, pass, x.data(), 1, one);  // warm-up, and the T = 1 reference
      std::vector<std::vector<double>> ms(std::size(kSizes));
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < std::size(kSizes); ++i) {
          const size_t s = r % 2 == 0 ? i : std::size(kSizes) - 1 - i;
          const double t0 = now_ms(threads);
          run_pass(pool, scratch, pass, x.data(), kSizes[s], out);
          ms[s].push_back(now_ms(threads) - t0);
        }
      // Row 0 of every T equals T = 1 (the first row's inputs are the same).
      bool same = true;
      for (int T : kSizes) {
        run_pass(pool, scratch, pass, x.data(), T, out);
        for (size_t g = 0; g < out.size(); ++g) {
          size_t at_t = 0, at_1 = 0;
          for (const Matrix& m : pass.groups[g]) {
            same = same && std::memcmp(out[g].data() + at_t, one[g].data() + at_1, m.N * sizeof(float)) == 0;
            at_t += static_cast<size_t>(T) * m.N;
            at_1 += m.N;
          }
        }
      }
      failures += !same;
      const double base = median(ms[0]);
      printf("%-4s %.2f GB, %s: T=1 %.1f ms (%.1f GB/s)", name, bytes / 1e9, threads > 1 ? "2 threads, wall" : "1 thread, CPU time", base,
             bytes / base / 1e6);
      for (size_t s = 1; s < std::size(kSizes); ++s) printf(", T=%d x%.2f", kSizes[s], median(ms[s]) / base);
      printf("; row 0 %s\n", same ? "equals T=1 bit for bit" : "DIFFERS from T=1");
      fflush(stdout);
    }
  }
  return failures != 0;
}
