// The attention kernels alone on the Qwen3-0.6B attention shape (8 kv heads,
// 2 query heads each, head_dim 128, f16 KV cache in blocks of 16 as the engine
// allocates it by default), one layer, one thread, thread CPU time:
//
//   prefill: a 512-token prompt in the tiles forward.cc makes (16 tokens x
//            the 2 query heads of one kv head: 32 rows, 256 tiles), causal;
//   decode:  one new token for each of 16 sequences at contexts 593..608
//            (16 x 8 tiles of 2 rows).
//
// Kernels: the old AVX2 kernel (scalar expf, one key at a time: what every set
// above baseline ran before) against the tile kernel in its AVX2 and AVX-512
// builds, in alternating rounds (the order rotates every round), medians.
// Checks that the two tile builds give the same bits, and how far each kernel
// is from a double-precision softmax. Then the MLP's silu(gate) * up on one
// 16-token tile of the 0.6B's 3072 intermediate values: the old scalar loop
// (the C library's expf; still the baseline) against the vector one.
// --check-exp: the vector exp against double exp on every float in
// [-87.3, 88], and the SiLU against double.
//
//   sh bench/attention/run.sh [--rounds N] [--f32] [--check-exp]   (needs g++; no node)
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../../native/src/cpu/kernels/activation/activation.h"
#include "../../native/src/cpu/kernels/attention/attention.h"
#include "../../native/src/cpu/base/cpu_features.h"
#include "../../native/src/cpu/base/half.h"

namespace weft {
void attend_old_avx2(const KvView&, int, int, const int32_t*, const QueryRow*, int, float*);
void exp16_avx2(const float* in, float* out);
void exp16_avx512(const float* in, float* out);
}  // namespace weft
using namespace weft;

static double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;  // ms
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

constexpr int kKvHeads = 8, kGroup = 2, kHeadDim = 128, kBlock = 16, kTileTokens = 16;

// One tile: the rows of up to 16 tokens x the query heads of one kv head.
struct Tile {
  int seq, kv_head;
  std::vector<QueryRow> rows;
};

struct Scenario {
  const char* name;
  KvView kv;
  std::vector<std::vector<int32_t>> tables;  // per sequence
  std::vector<Tile> tiles;
  std::vector<float> q, out;                 // [rows][head_dim]
};

// A cache of one layer holding `contexts[s]` positions for each sequence, its
// blocks shuffled over the cache; queries for `new_tokens[s]` tokens at the end.
static void build(Scenario& sc, const std::vector<int>& contexts, const std::vector<int>& new_tokens, bool f32,
                  std::vector<float>& store32, std::vector<uint16_t>& store16, std::mt19937& rng) {
  int blocks = 1;  // block 0 is the null block
  for (int c : contexts) blocks += (c + kBlock - 1) / kBlock;
  std::vector<int32_t> order(blocks - 1);
  for (int i = 0; i < blocks - 1; ++i) order[i] = i + 1;
  std::shuffle(order.begin(), order.end(), rng);
  const size_t elements = static_cast<size_t>(2) * blocks * kKvHeads * kBlock * kHeadDim;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Keys with twice the queries' spread: scores of standard deviation ~2 (peaked, as trained heads are).
  store32.assign(elements, 0.0f);
  for (size_t i = 0; i < elements; ++i) store32[i] = normal(rng) * (i < elements / 2 ? 2.0f : 1.0f);
  sc.kv.precision = f32 ? KvPrecision::F32 : KvPrecision::F16;
  if (!f32) {
    store16.resize(elements);
    for (size_t i = 0; i < elements; ++i) store16[i] = f32_to_f16(store32[i]), store32[i] = f16_to_f32(store16[i]);
    sc.kv.f16 = store16.data();
  }
  sc.kv.f32 = store32.data();  // the f16 run keeps the widened values here for the double reference
  sc.kv.num_blocks = blocks;
  sc.kv.block_size = kBlock;
  sc.kv.kv_heads = kKvHeads;
  sc.kv.head_dim = kHeadDim;
  size_t next = 0, total_rows = 0;
  for (size_t s = 0; s < contexts.size(); ++s) {
    const int nb = (contexts[s] + kBlock - 1) / kBlock;
    sc.tables.emplace_back(order.begin() + next, order.begin() + next + nb);
    next += nb;
    total_rows += static_cast<size_t>(new_tokens[s]) * kKvHeads * kGroup;
  }
  sc.q.resize(total_rows * kHeadDim);
  for (auto& x : sc.q) x = normal(rng);
  sc.out.assign(total_rows * kHeadDim, 0.0f);
  size_t row = 0;
  for (size_t s = 0; s < contexts.size(); ++s) {
    const int first = contexts[s] - new_tokens[s];
    for (int t0 = 0; t0 < new_tokens[s]; t0 += kTileTokens)
      for (int g = 0; g < kKvHeads; ++g) {
        Tile tile{static_cast<int>(s), g, {}};
        for (int t = t0; t < std::min(t0 + kTileTokens, new_tokens[s]); ++t)
          for (int h = 0; h < kGroup; ++h, ++row)
            tile.rows.push_back({&sc.q[row * kHeadDim], &sc.out[row * kHeadDim], 0, first + t + 1});
        sc.tiles.push_back(std::move(tile));
      }
  }
}

static std::vector<float> scratch(2 * kBlock * kHeadDim + kBlock + kTileTokens * kGroup * (kHeadDim + 2));

static double run(const Scenario& sc, AttentionFn fn) {
  const double t0 = cpu_now();
  for (const Tile& tile : sc.tiles)
    fn(sc.kv, 0, tile.kv_head, sc.tables[tile.seq].data(), tile.rows.data(), static_cast<int>(tile.rows.size()), scratch.data());
  return cpu_now() - t0;
}

// Largest |out - exact| over all rows, the exact result from the same (widened) cache in double.
static double error_vs_double(const Scenario& sc) {
  double worst = 0;
  std::vector<double> s, o(kHeadDim);
  for (const Tile& tile : sc.tiles)
    for (const QueryRow& r : tile.rows) {
      s.assign(r.end - r.begin, 0.0);
      double mx = -INFINITY;
      for (int64_t p = r.begin; p < r.end; ++p) {
        const size_t at = cache_row_offset(sc.kv, 0, 0, sc.tables[tile.seq][p / kBlock], tile.kv_head, p % kBlock);
        double dot = 0;
        for (int d = 0; d < kHeadDim; ++d) dot += static_cast<double>(r.q[d]) * sc.kv.f32[at + d];
        s[p - r.begin] = dot / std::sqrt(static_cast<double>(kHeadDim));
        mx = std::max(mx, s[p - r.begin]);
      }
      double sum = 0;
      std::fill(o.begin(), o.end(), 0.0);
      for (int64_t p = r.begin; p < r.end; ++p) {
        const double w = std::exp(s[p - r.begin] - mx);
        sum += w;
        const size_t at = cache_row_offset(sc.kv, 0, 1, sc.tables[tile.seq][p / kBlock], tile.kv_head, p % kBlock);
        for (int d = 0; d < kHeadDim; ++d) o[d] += w * sc.kv.f32[at + d];
      }
      for (int d = 0; d < kHeadDim; ++d) worst = std::max(worst, std::fabs(r.out[d] - o[d] / sum));
    }
  return worst;
}

static uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Every float in [-87.3, 88] through both builds' vector exp, against double exp;
// the SiLU of every 64th float in [-100, 100] against double.
static int check_exp(bool avx512) {
  double worst_ulp = 0, worst_rel = 0;
  float worst_x = 0;
  size_t mismatches = 0, count = 0;
  float in[16], a[16], b[16];
  // Two runs of bit patterns: -0 .. -87.3 (increasing bits) and +0 .. 88.
  const uint32_t ranges[2][2] = {{bits_of(-0.0f), bits_of(-87.3f)}, {bits_of(0.0f), bits_of(88.0f)}};
  for (const auto& range : ranges) {
  uint32_t bits = range[0];
  for (bool done = false; !done;) {
    for (int i = 0; i < 16; ++i) {
      std::memcpy(&in[i], &bits, 4);
      if (bits < range[1]) ++bits; else done = true;
    }
    exp16_avx2(in, a);
    if (avx512) {
      exp16_avx512(in, b);
      if (std::memcmp(a, b, sizeof a) != 0) ++mismatches;
    }
    for (int i = 0; i < 16; ++i) {
      const double exact = std::exp(static_cast<double>(in[i]));
      const float rounded = static_cast<float>(exact);
      const double ulp = std::nextafter(rounded, INFINITY) - rounded;
      const double err = std::fabs(a[i] - exact);
      if (err / ulp > worst_ulp) worst_ulp = err / ulp, worst_x = in[i];
      worst_rel = std::max(worst_rel, err / exact);
    }
    count += 16;
  }
  }
  // SiLU: relative error against double, on every 64th float of [-100, 100].
  double silu_worst = 0;
  size_t silu_mismatches = 0;
  {
    const SiluMulFn f2 = silu_mul_avx2, f5 = avx512 ? silu_mul_avx512 : silu_mul_avx2;
    std::vector<float> g, u, g2;
    for (uint32_t b = bits_of(0.0f); b <= bits_of(100.0f); b += 64) {
      float x;
      std::memcpy(&x, &b, 4);
      g.push_back(x), g.push_back(-x);
    }
    u.assign(g.size(), 1.0f);
    g2 = g;
    std::vector<float> g5 = g;
    f2(g2.data(), u.data(), g2.size());
    f5(g5.data(), u.data(), g5.size());
    silu_mismatches = std::memcmp(g2.data(), g5.data(), g2.size() * 4) != 0;
    for (size_t i = 0; i < g.size(); ++i) {
      const double exact = g[i] / (1.0 + std::exp(-static_cast<double>(g[i])));
      if (exact != 0 && std::fabs(exact) > 1e-30) silu_worst = std::max(silu_worst, std::fabs(g2[i] - exact) / std::fabs(exact));
    }
    printf("silu check: %zu values in [-100, 100]: relative error at most %.3g against double%s\n", g.size(), silu_worst,
           avx512 ? (silu_mismatches ? ", AVX-512 DIFFERS from AVX2" : ", AVX2 = AVX-512 bit for bit") : "");
  }
  float special[16] = {-INFINITY, NAN, -88.0f, -87.5f, 0.0f, -0.0f, -1e-30f, -87.33f, -1, -2, -3, -4, -5, -6, -7, -8};
  exp16_avx2(special, a);
  printf("exp check: %zu floats in [-87.3, 88]: at most %.3f ulp (at x = %.9g), relative error at most %.3g "
         "(against double exp)%s; exp(-inf) = %g, exp(NaN) = %g, exp(-88) = %g\n",
         count, worst_ulp, worst_x, worst_rel, avx512 ? (mismatches ? ", AVX-512 DIFFERS from AVX2" : ", AVX2 = AVX-512 bit for bit") : "",
         a[0], a[1], a[2]);
  return worst_ulp <= 1.0 && mismatches == 0 && silu_mismatches == 0 && silu_worst < 1e-6 && a[0] == 0.0f && std::isnan(a[1]) ? 0 : 1;
}

int main(int argc, char** argv) {
  int rounds = 9;
  bool f32 = false, exp_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (a == "--f32") f32 = true;
    else if (a == "--check-exp") exp_only = true;
  }
  const bool avx2 = cpu_supports(KernelSet::Avx2), avx512 = attention_kernel_of(KernelSet::Avx512Vnni) == attend_avx512;
  printf("CPU: %s; best kernel set: %s; flags: %s\n", cpu_model().c_str(), kernel_set_name(cpu_best_kernel_set()),
         cpu_flag_names(cpu_flags()).c_str());
  if (!avx2) {
    printf("no AVX2/FMA/F16C: nothing to compare\n");
    return 0;
  }
  if (exp_only) return check_exp(avx512);

  std::mt19937 rng(7);
  std::vector<float> s32a, s32b;
  std::vector<uint16_t> s16a, s16b;
  Scenario prefill{"prefill 512", {}, {}, {}, {}, {}}, decode{"decode 16 x ~600", {}, {}, {}, {}, {}};
  build(prefill, {512}, {512}, f32, s32a, s16a, rng);
  std::vector<int> contexts, ones(16, 1);
  for (int s = 0; s < 16; ++s) contexts.push_back(593 + s);
  build(decode, contexts, ones, f32, s32b, s16b, rng);

  struct Kernel { const char* name; AttentionFn fn; };
  std::vector<Kernel> kernels = {{"old avx2", attend_old_avx2}, {"tile avx2", attend_avx2}};
  if (avx512) kernels.push_back({"tile avx512", attend_avx512});
  printf("one layer, 8 kv heads x 2 query heads, head_dim 128, %s KV cache in blocks of 16, one thread, thread CPU time, "
         "median of %d alternating rounds\n\n",
         f32 ? "f32" : "f16", rounds);
  int failures = 0;
  for (Scenario* sc : {&prefill, &decode}) {
    std::vector<std::vector<double>> times(kernels.size());
    std::vector<std::vector<float>> outs(kernels.size());
    std::vector<double> errors(kernels.size());
    for (size_t k = 0; k < kernels.size(); ++k) {  // warm-up, results and accuracy
      run(*sc, kernels[k].fn);
      outs[k] = sc->out;
      errors[k] = error_vs_double(*sc);
    }
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < kernels.size(); ++i) {
        const size_t k = (i + r) % kernels.size();
        times[k].push_back(run(*sc, kernels[k].fn));
      }
    printf("%s (%zu tiles):\n", sc->name, sc->tiles.size());
    const double old_ms = median(times[0]);
    for (size_t k = 0; k < kernels.size(); ++k)
      printf("  %-12s %8.3f ms  %5.2fx the old kernel   max |error| vs double %.2e\n", kernels[k].name, median(times[k]),
             old_ms / median(times[k]), errors[k]);
    if (avx512) {
      const bool same = outs[1] == outs[2];
      printf("  tile avx2 and tile avx512 outputs: %s\n", same ? "identical bit for bit" : "DIFFER");
      failures += !same;
    }
    for (size_t k = 1; k < kernels.size(); ++k)
      if (errors[k] > 4 * errors[0] + 1e-6) {
        printf("  %s is further from the exact result than the old kernel allows\n", kernels[k].name);
        ++failures;
      }
  }
  {  // silu(gate) * up on one 16-token tile of 3072 values, 200 calls per timing
    const size_t n = 16 * 3072;
    std::vector<float> gate(n), up(n), work(n);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (size_t i = 0; i < n; ++i) gate[i] = normal(rng), up[i] = normal(rng);
    struct Act { const char* name; SiluMulFn fn; };
    std::vector<Act> acts = {{"scalar expf", silu_mul_baseline}, {"vector avx2", silu_mul_avx2}};
    if (avx512) acts.push_back({"vector avx512", silu_mul_avx512});
    std::vector<std::vector<double>> times(acts.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < acts.size(); ++i) {
        const size_t k = (i + r) % acts.size();
        const double t0 = cpu_now();
        for (int rep = 0; rep < 200; ++rep) {
          std::memcpy(work.data(), gate.data(), n * 4);
          acts[k].fn(work.data(), up.data(), n);
        }
        times[k].push_back((cpu_now() - t0) / 200);
      }
    printf("silu(gate) * up, 16 x 3072 values (copy of the input included):\n");
    for (size_t k = 0; k < acts.size(); ++k)
      printf("  %-14s %8.4f ms  %5.2fx the scalar loop\n", acts[k].name, median(times[k]), median(times[0]) / median(times[k]));
  }
  return failures ? 1 : 0;
}
