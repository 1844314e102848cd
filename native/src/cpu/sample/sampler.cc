// The native sampling chain (see sampler.h). Each step mirrors a line of
// src/sampling/sampler.ts or selection.ts; the comments say which.
#include "sample/sampler.h"

#include <chrono>
#include <cmath>
#include <thread>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <limits>

#include "kernels/argmax/argmax.h"
#include "sample/exp_rows.h"
#include "sample/js_math.h"

namespace weft {
namespace {

using Candidate = SamplerScratch::Candidate;

// ---- selection.ts -------------------------------------------------------

// Pivot stream: xorshift32 restarted at every selection (PIVOT_SEED).
constexpr uint32_t kPivotSeed = 0x9e3779b9u;
inline uint32_t next_pivot(uint32_t& state) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

// "Higher weight first, lower id on ties".
// Bitwise, not ||: the comparison is a coin toss for the branch predictor.
inline bool before(const Candidate& a, double pw, int32_t pid) {
  return static_cast<bool>(static_cast<int>(a.weight > pw) | (static_cast<int>(a.weight == pw) & static_cast<int>(a.id < pid)));
}

// partition(): Lomuto around a pivot drawn from the stream, with the very
// arrangement the JS loop leaves, computed without its chain of dependent
// swaps. What that loop leaves, for the entries a[lo .. hi - 1) it scans:
//  - the entries ordered before the pivot ("before"), in their order, at [lo, S);
//  - at each position p >= S, f(p): what position p held right after the loop's
//    step p. That is a[p] when a[p] is not "before", and otherwise what position
//    s(p) = lo + (the number of "before" entries in [lo, p)) held, which is
//    f(s(p)) (untouched since its own step, s(p) < p);
//  then its last swap puts the pivot at S and f(S) at hi - 1.
// So one pass computes f into `tmp` (each read of tmp an earlier entry) and
// compacts the "before" entries in place; the tail is copied from tmp.
// `before_sum` (may be null): the weights of the "before" entries added in
// their order, which is selectMass's sum over [lo, at) after the partition
// (adding +0.0 for the others changes no bit of a sum of positive weights).
int32_t partition(Candidate* c, int32_t lo, int32_t hi, uint32_t& state, Candidate* tmp, double* before_sum = nullptr) {
  const int32_t p = lo + static_cast<int32_t>(next_pivot(state) % static_cast<uint32_t>(hi - lo));
  std::swap(c[p], c[hi - 1]);
  const Candidate pivot = c[hi - 1];
  const double pw = pivot.weight;
  const int32_t pid = pivot.id;
  const int32_t end = hi - 1;
  int32_t store = lo;
  Candidate* f = tmp - lo;  // f[q] for q in [lo, end)
  double sum = 0;
  for (int32_t q = lo; q < end; ++q) {
    const Candidate x = c[q];
    const bool b = before(x, pw, pid);
    // store == q: every entry so far was "before", the loop swaps x with itself, f[q] is x.
    const bool moved = b & (store < q);
#if defined(__SSE2__)
    const __m128i xv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + q));
    const __m128i fv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + store));
    const __m128i m = _mm_set1_epi32(-static_cast<int32_t>(moved));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(f + q), _mm_or_si128(_mm_and_si128(m, fv), _mm_andnot_si128(m, xv)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + store), xv);
#else
    f[q] = moved ? f[store] : x;
    c[store] = x;
#endif
    store += b;
    sum += x.weight * static_cast<double>(b);  // w * 1 or w * 0: exact, and no branch
  }
  if (before_sum != nullptr) *before_sum = sum;
  for (int32_t q = store + 1; q < end; ++q) c[q] = f[q];
  if (store < end) c[end] = f[store];
  c[store] = pivot;
  return store;
}

// selectBest(): the best k (k < n).
int32_t select_best(Candidate* c, int32_t n, int32_t k, Candidate* tmp) {
  uint32_t state = kPivotSeed;
  int32_t lo = 0, hi = n;
  while (hi - lo > 1) {
    const int32_t at = partition(c, lo, hi, state, tmp);
    if (at + 1 == k) return k;
    if (at + 1 > k) hi = at;
    else lo = at + 1;
  }
  return k;
}

// selectMass(): the shortest best prefix weighing at least `mass`.
int32_t select_mass(Candidate* c, int32_t n, double mass, Candidate* tmp) {
  uint32_t state = kPivotSeed;
  int32_t lo = 0, hi = n;
  double need = mass;
  while (hi > lo) {
    double sum_before;
    const int32_t at = partition(c, lo, hi, state, tmp, &sum_before);
    if (sum_before >= need) {
      hi = at;
      continue;
    }
    need -= sum_before;
    if (c[at].weight >= need) return at + 1;
    need -= c[at].weight;
    lo = at + 1;
  }
  return lo > 1 ? lo : 1;
}

// ---- sampler.ts ---------------------------------------------------------

// allFinite(): no NaN, no infinity.
bool all_finite(const float* row, int32_t n) {
  bool ok = true;
  for (int32_t i = 0; i < n; ++i) ok &= std::isfinite(row[i]);
  return ok;
}

// topLogprobs(): max, sum of exp(value - max) in index order, and the best
// `n` by value - logSumExp with the insertion list of the JS (ties keep the
// lower id first). logSumExp uses fdlibm's log (js_math.h); JavaScript
// computes the reported values from stats with its own Math.log.
void top_logprobs(bool simd, const float* row, int32_t vocab, int32_t n, double* stats, int32_t* top) {
  const double max = row_max(simd, row, vocab);
  const double sum = sum_exp_minus(simd, row, vocab, max);
  const double log_sum_exp = max + jsmath::log(sum);
  stats[0] = max;
  stats[1] = sum;
  // best[0..size): (logprob, token), best first.
  double best_lp[32];
  int32_t best_token[32];
  float best_value[32];
  int32_t size = 0;
  for (int32_t token = 0; token < vocab; ++token) {
    const float value = row[token];
    // logprob is non-decreasing in value: a value below the last kept one cannot enter.
    if (size == n && value < best_value[n - 1]) continue;
    const double logprob = static_cast<double>(value) - log_sum_exp;
    if (size == n && logprob <= best_lp[n - 1]) continue;
    int32_t at = size;
    while (at > 0 && best_lp[at - 1] < logprob) --at;
    if (at >= n) continue;  // a NaN logprob (an all-masked row): the JS splices it in at n and pops it
    const int32_t last = size < n ? size : n - 1;
    for (int32_t j = last; j > at; --j) {
      best_lp[j] = best_lp[j - 1];
      best_token[j] = best_token[j - 1];
      best_value[j] = best_value[j - 1];
    }
    best_lp[at] = logprob;
    best_token[at] = token;
    best_value[at] = value;
    if (size < n) ++size;
  }
  for (int32_t j = 0; j < n; ++j) top[j] = j < size ? best_token[j] : -1;
}

// applyPenalties(), keeping each overwritten value to put back afterwards.
void apply_penalties(float* row, int32_t vocab, const double* p, const int32_t* seen, size_t num_seen, const int32_t* counted,
                     const int32_t* counts, size_t num_counted, std::vector<std::pair<int32_t, float>>& saved) {
  const double repetition = p[kRepetitionPenalty], presence = p[kPresencePenalty], frequency = p[kFrequencyPenalty];
  if (repetition != 1) {
    for (size_t i = 0; i < num_seen; ++i) {
      const int32_t token = seen[i];
      if (token < 0 || token >= vocab) continue;  // JS: a write past the row's end is dropped
      const float value = row[token];
      saved.emplace_back(token, value);
      const double v = value;
      row[token] = static_cast<float>(v > 0 ? v / repetition : v * repetition);
    }
  }
  if (presence != 0 || frequency != 0) {
    for (size_t i = 0; i < num_counted; ++i) {
      const int32_t token = counted[i];
      if (token < 0 || token >= vocab) continue;
      const float value = row[token];
      saved.emplace_back(token, value);
      const double penalty = presence + frequency * static_cast<double>(counts[i]);
      row[token] = static_cast<float>(static_cast<double>(value) - penalty);
    }
  }
}

// draw(): returns the token; sets drew when the random number was used.
int32_t draw(bool simd, const float* row, int32_t vocab, const double* p, SamplerScratch& scratch, bool& drew) {
  const double temperature = p[kTemperature], top_p = p[kTopP], min_p = p[kMinP];
  const int32_t top_k = static_cast<int32_t>(p[kTopK]);
  const double max = row_max(simd, row, vocab);
  if (!std::isfinite(max)) return argmax_kernel()(row, vocab);
  const double floor = p[kLogFloor] * temperature + max;
  if (scratch.candidates.size() < static_cast<size_t>(vocab)) scratch.candidates.resize(static_cast<size_t>(vocab));
  if (scratch.partitioned.size() < static_cast<size_t>(vocab)) scratch.partitioned.resize(static_cast<size_t>(vocab));
  Candidate* c = scratch.candidates.data();
  int32_t n = collect_candidates(simd, row, vocab, max, temperature, floor, min_p, c);
  if (n == 0) return argmax_kernel()(row, vocab);
  if (top_k > 0 && n > top_k) n = select_best(c, n, top_k, scratch.partitioned.data());
  double total = 0;
  for (int32_t i = 0; i < n; ++i) total += c[i].weight;
  if (top_p < 1) {
    n = select_mass(c, n, top_p * total, scratch.partitioned.data());
    total = 0;
    for (int32_t i = 0; i < n; ++i) total += c[i].weight;
  }
  if (!(total > 0)) return argmax_kernel()(row, vocab);
  drew = true;
  double threshold = p[kRandom] * total;
  for (int32_t i = 0; i < n; ++i) {
    threshold -= c[i].weight;
    if (threshold < 0) return c[i].id;
  }
  return c[n - 1].id;
}

}  // namespace

void sample_row(bool simd, float* row, int32_t vocab, const double* p, const int32_t* seen, size_t num_seen, const int32_t* counted,
                const int32_t* counts, size_t num_counted, SamplerScratch& scratch, int32_t& token, uint8_t& flags, double* stats,
                int32_t* top, const uint32_t* mask) {
  token = -1;
  flags = kSampled;
  if (!all_finite(row, vocab)) {
    flags |= kNonFinite;
    return;
  }
  // applyMask() (src/guided/grammar.ts): a refused token's logit is -Infinity.
  if (mask != nullptr)
    for (int32_t w = 0; w * 32 < vocab; ++w) {
      const uint32_t word = mask[w];
      if (word == 0xFFFFFFFFu) continue;
      const int32_t end = vocab - w * 32 < 32 ? vocab - w * 32 : 32;
      for (int32_t b = 0; b < end; ++b)
        if ((word & (1u << b)) == 0) row[w * 32 + b] = -std::numeric_limits<float>::infinity();
    }
  const int32_t logprobs = static_cast<int32_t>(p[kLogprobs]);
  if (logprobs > 0) top_logprobs(simd, row, vocab, logprobs, stats, top);
  scratch.saved.clear();
  apply_penalties(row, vocab, p, seen, num_seen, counted, counts, num_counted, scratch.saved);
  const bool greedy = p[kTemperature] == 0 || p[kTopK] == 1;
  bool drew = false;
  token = greedy ? argmax_kernel()(row, vocab) : draw(simd, row, vocab, p, scratch, drew);
  if (drew) flags |= kDrew;
  // The logits go back to JavaScript as the model gave them.
  for (size_t i = scratch.saved.size(); i-- > 0;) row[scratch.saved[i].first] = scratch.saved[i].second;
}

std::string validate_sampling(const SamplingInput& in, size_t rows, int32_t vocab) {
  if (in.rows.size() != rows) return "sampling.rows has " + std::to_string(in.rows.size()) + " entries, logitsIndices has " + std::to_string(rows);
  if (in.params.size() != rows * kSamplingParams)
    return "sampling.params has " + std::to_string(in.params.size()) + " values, expected " + std::to_string(rows * kSamplingParams);
  auto check_begins = [&](const std::vector<int32_t>& begins, size_t total, const char* name) -> std::string {
    if (begins.size() != rows + 1) return std::string("sampling.") + name + " must have logitsIndices.length + 1 entries";
    if (begins[0] != 0 || static_cast<size_t>(begins[rows]) != total) return std::string("sampling.") + name + " must run from 0 to its list's length";
    for (size_t r = 0; r < rows; ++r)
      if (begins[r + 1] < begins[r]) return std::string("sampling.") + name + " must not decrease";
    return "";
  };
  std::string e = check_begins(in.seen_begins, in.seen.size(), "seenBegins");
  if (e.empty()) e = check_begins(in.counted_begins, in.counted.size(), "countedBegins");
  if (!e.empty()) return e;
  if (in.counts.size() != in.counted.size()) return "sampling.counts must have one entry per sampling.counted token";
  if (!in.masks.empty() && (in.masks.size() != rows || in.masks_ready == nullptr))
    return "sampling.masks must have logitsIndices.length entries, with masksReady";
  for (size_t r = 0; r < rows; ++r) {
    if (in.rows[r] == 0) continue;
    const double* p = in.params.data() + r * kSamplingParams;
    const double t = p[kTemperature], k = p[kTopK], lp = p[kLogprobs], rnd = p[kRandom];
    if (!(t >= 0) || !std::isfinite(t)) return "sampling: row " + std::to_string(r) + " has a bad temperature";
    if (!(k >= 0 && k <= 2147483647.0) || std::floor(k) != k) return "sampling: row " + std::to_string(r) + " has a bad topK";
    if (!(lp >= 0 && lp <= 32) || std::floor(lp) != lp) return "sampling: row " + std::to_string(r) + " asks for logprobs outside [0, 32]";
    if (!(rnd >= 0 && rnd < 1)) return "sampling: row " + std::to_string(r) + " has a random number outside [0, 1)";
    for (int i = 0; i < kSamplingParams; ++i)
      if (std::isnan(p[i])) return "sampling: row " + std::to_string(r) + " has a NaN parameter";
  }
  (void)vocab;
  return "";
}

bool wait_for_masks(const int32_t* masks_ready, int timeout_ms) {
  if (masks_ready == nullptr) return false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  // Atomics.store on the main thread after the masks' plain writes: an acquire load here sees them.
  for (int spins = 0; __atomic_load_n(masks_ready, __ATOMIC_ACQUIRE) == 0; ++spins) {
    if (spins < 1000) continue;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

void SamplerScratchPool::ensure(int threads) {
  while (per_thread_.size() < static_cast<size_t>(threads)) per_thread_.push_back(std::make_unique<SamplerScratch>());
}

void sample_rows(const SamplingInput& in, float* logits, size_t rows, int32_t vocab, ThreadPool& pool, SamplerScratchPool& scratch,
                 SamplingOutput& out) {
  out.tokens.assign(rows, -1);
  out.flags.assign(rows, 0);
  out.stats.assign(rows * 2, 0.0);
  int32_t width = 0;
  for (size_t r = 0; r < rows; ++r)
    if (in.rows[r] != 0 && in.params[r * kSamplingParams + kLogprobs] > width) width = static_cast<int32_t>(in.params[r * kSamplingParams + kLogprobs]);
  out.top_width = width;
  out.top.assign(rows * static_cast<size_t>(width), -1);
  scratch.ensure(pool.size());
  const bool simd = exp_rows_simd();
  // Masked rows wait for their masks; without them (a timeout) they are left to the engine.
  bool masks_ready = true;
  if (!in.masks.empty()) masks_ready = wait_for_masks(in.masks_ready, 10000);
  pool.parallel_for(rows, 1, [&](size_t begin, size_t end, int thread) {
    SamplerScratch& s = scratch.at(thread);
    for (size_t r = begin; r < end; ++r) {
      if (in.rows[r] == 0) continue;
      const uint32_t* mask = in.masks.empty() ? nullptr : in.masks[r];
      if (mask != nullptr && !masks_ready) continue;
      const size_t seen_at = static_cast<size_t>(in.seen_begins[r]), counted_at = static_cast<size_t>(in.counted_begins[r]);
      sample_row(simd, logits + r * static_cast<size_t>(vocab), vocab, in.params.data() + r * kSamplingParams, in.seen.data() + seen_at,
                 static_cast<size_t>(in.seen_begins[r + 1]) - seen_at, in.counted.data() + counted_at, in.counts.data() + counted_at,
                 static_cast<size_t>(in.counted_begins[r + 1]) - counted_at, s, out.tokens[r], out.flags[r], out.stats.data() + r * 2,
                 out.top.data() + r * static_cast<size_t>(width), mask);
    }
  });
}

}  // namespace weft
