// The native sampling chain (see sampler.h). Each step mirrors a line of
// src/sampling/sampler.ts or selection.ts; the comments say which.
#include "sample/sampler.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "kernels/argmax/argmax.h"
#include "sample/exp_rows.h"
#include "sample/js_math.h"
#include "sample/selection.h"

namespace weft {
namespace {

using Candidate = SamplerScratch::Candidate;

// ---- sampler.ts ---------------------------------------------------------

// topLogprobs(): max (the row's, given), sum of exp(value - max) in index order, and the best
// `n` by value - logSumExp with the insertion list of the JS (ties keep the
// lower id first). logSumExp uses fdlibm's log (js_math.h); JavaScript
// computes the reported values from stats with its own Math.log.
void top_logprobs(SampleKernels kernels, const float* row, int32_t vocab, int32_t n, double max, double* stats, int32_t* top) {
  const double sum = sum_exp_minus(kernels, row, vocab, max);
  const double log_sum_exp = max + jsmath::log(sum);
  stats[0] = max;
  stats[1] = sum;
  // best[0..size): (logprob, token), best first.
  double best_lp[32];
  int32_t best_token[32];
  float best_value[32];
  int32_t size = 0;
  for (int32_t token = 0; token < vocab; ++token) {
    // logprob is non-decreasing in value: a value below the last kept one cannot enter (skipped a vector at a time).
    if (size == n) {
      token = next_at_least(kernels, row, token, vocab, best_value[n - 1]);
      if (token == vocab) break;
    }
    const float value = row[token];
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

// The penalised row's max as draw()'s scan finds it, from the row's max before the
// penalties (`max`): the penalties changed only the saved tokens, so unless one of
// them held that max, it is the larger of `max` and their new values; else a pass.
double penalised_max(SampleKernels kernels, const float* row, int32_t vocab, double max,
                     const std::vector<std::pair<int32_t, float>>& saved) {
  for (const auto& [token, before] : saved)
    if (static_cast<double>(before) == max) return row_max(kernels, row, vocab);
  float m = static_cast<float>(max);
  for (const auto& [token, before] : saved)
    if (row[token] > m) m = row[token];
  return m;
}

// draw(): returns the token; sets drew when the random number was used. max: the row's (row_max).
int32_t draw(SampleKernels kernels, const float* row, int32_t vocab, double max, const double* p, SamplerScratch& scratch, bool& drew) {
  const double temperature = p[kTemperature], top_p = p[kTopP], min_p = p[kMinP];
  const int32_t top_k = static_cast<int32_t>(p[kTopK]);
  if (!std::isfinite(max)) return argmax_kernel()(row, vocab);
  const double floor = p[kLogFloor] * temperature + max;
  const size_t room = static_cast<size_t>(vocab) + 8;  // gather_before's full-vector stores
  if (scratch.candidates.size() < room) scratch.candidates.resize(room);
  if (scratch.partitioned.size() < room) scratch.partitioned.resize(room);
  Candidate* c = scratch.candidates.data();
  const SelectionBuffer work = scratch.partitioned.data();
  double total;  // c[0..n)'s weights added in order from 0, as the JS total
  int32_t n = collect_candidates(kernels, row, vocab, max, temperature, floor, min_p, c, &total);
  if (n == 0) return argmax_kernel()(row, vocab);
  if (top_k > 0 && n > top_k) {
    n = select_best(kernels, c, n, top_k, work);
    total = 0;
    for (int32_t i = 0; i < n; ++i) total += c[i].weight;
  }
  if (top_p < 1) n = select_mass(kernels, c, n, top_p * total, work, &total);
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

void sample_row(SampleKernels kernels, float* row, int32_t vocab, const double* p, const int32_t* seen, size_t num_seen, const int32_t* counted,
                const int32_t* counts, size_t num_counted, SamplerScratch& scratch, int32_t& token, uint8_t& flags, double* stats,
                int32_t* top, const uint32_t* mask) {
  token = -1;
  flags = kSampled;
  double max;  // the row's, as the JS scan finds it (exp_rows.h)
  if (!finite_row_max(kernels, row, vocab, &max)) {
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
  if (mask != nullptr) max = row_max(kernels, row, vocab);
  const int32_t logprobs = static_cast<int32_t>(p[kLogprobs]);
  if (logprobs > 0) top_logprobs(kernels, row, vocab, logprobs, max, stats, top);
  scratch.saved.clear();
  apply_penalties(row, vocab, p, seen, num_seen, counted, counts, num_counted, scratch.saved);
  const bool greedy = p[kTemperature] == 0 || p[kTopK] == 1;
  bool drew = false;
  token = greedy ? argmax_kernel()(row, vocab)
                 : draw(kernels, row, vocab, scratch.saved.empty() ? max : penalised_max(kernels, row, vocab, max, scratch.saved), p, scratch, drew);
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
  const SampleKernels kernels = sample_kernels();
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
      sample_row(kernels, logits + r * static_cast<size_t>(vocab), vocab, in.params.data() + r * kSamplingParams, in.seen.data() + seen_at,
                 static_cast<size_t>(in.seen_begins[r + 1]) - seen_at, in.counted.data() + counted_at, in.counts.data() + counted_at,
                 static_cast<size_t>(in.counted_begins[r + 1]) - counted_at, s, out.tokens[r], out.flags[r], out.stats.data() + r * 2,
                 out.top.data() + r * static_cast<size_t>(width), mask);
    }
  });
}

}  // namespace weft
