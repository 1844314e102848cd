// The sampling chain on the model's threads: each row a step's batch asks for
// (StepBatch.sampling, src/backends/backend.ts) gets its token here, right
// after the LM head wrote the logits, instead of on the main thread.
//
// The reference is src/sampling/sampler.ts (Sampler.sample without a grammar),
// and this is the same computation, operation for operation, so a given seed
// gives the same tokens either way:
//   1. a row with NaN or an infinity is refused (flag kNonFinite: the engine
//      fails that request, as the JS sampler's NonFiniteLogitsError does);
//   2. logprobs > 0: the raw row's max, its sum of exp(value - max) in index
//      order, and the top `logprobs` tokens by value - logSumExp (ties: lower id);
//   3. penalties (repetition over the request's prompt and output tokens,
//      presence / frequency over its output counts), in double, stored as float;
//   4. temperature 0 or top-k 1: the penalised row's argmax; otherwise the
//      candidates exp((l - max) / T) above the floor and min-p, top-k and top-p
//      by the same quickselect (same pivot stream) as src/sampling/selection.ts
//      (selection.h),
//      and the draw with the request's next random number (computed by its Rng
//      in JavaScript and sent in the batch: flag kDrew says it was used).
// exp is fdlibm's, as V8's Math.exp (js_math.h); sums are sequential, as in JS.
// Fewer passes over the row than the JS makes, each giving the JS value: the
// finite check finds the row's max too, the penalised row's max comes from it
// and the few penalised tokens, the candidates' pass adds up their total.
// The penalties are undone afterwards: the logits JavaScript gets are the model's.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"

namespace weft {

enum class SampleKernels : uint8_t;  // exp_rows.h

// The per-row parameters, kSamplingParams doubles a row, in this order
// (SAMPLING_PARAMS in src/backends/backend.ts).
enum SamplingParam : int {
  kTemperature = 0,
  kTopK,
  kTopP,
  kMinP,
  kRepetitionPenalty,
  kPresencePenalty,
  kFrequencyPenalty,
  kLogprobs,
  kLogFloor,  // Math.max(Math.log(1e-10), minP > 0 ? Math.log(minP) : -Infinity), from JavaScript
  kRandom,    // the request's next Rng value in [0, 1)
  kSamplingParams
};

// Flags of a row's outcome.
enum SampleFlag : uint8_t { kSampled = 1, kDrew = 2, kNonFinite = 4 };

// StepBatch.sampling, copied out of JavaScript.
struct SamplingInput {
  std::vector<uint8_t> rows;           // [R]: nonzero where this side samples the row
  std::vector<double> params;          // [R * kSamplingParams]
  std::vector<int32_t> seen;           // repetition-penalty tokens (prompt and output), each once per row
  std::vector<int32_t> seen_begins;    // [R + 1]
  std::vector<int32_t> counted;        // generated tokens, each once per row
  std::vector<int32_t> counts;         // their occurrences
  std::vector<int32_t> counted_begins; // [R + 1]
  // Guided rows: masks[r] (or null) is the grammar's mask of row r, bit t set iff
  // token t is allowed, (vocab + 31) / 32 words; JavaScript fills them while the
  // step runs and then stores 1 in *masks_ready (see wait_for_masks).
  std::vector<const uint32_t*> masks;  // [R] or empty
  const int32_t* masks_ready = nullptr;
  bool empty() const { return rows.empty(); }
};

// StepResult.sampled.
struct SamplingOutput {
  std::vector<int32_t> tokens;  // [R]: the chosen token, -1 where not sampled or refused
  std::vector<uint8_t> flags;   // [R]: SampleFlag bits
  std::vector<double> stats;    // [R * 2]: the raw row's max and sum of exp(value - max), rows with logprobs
  std::vector<int32_t> top;     // [R * top_width]: the top-logprob tokens, best first, -1 padded
  int32_t top_width = 0;        // the largest logprobs of the step
};

// "" when the input fits a step of `rows` logits rows of `vocab` values, else the first problem.
std::string validate_sampling(const SamplingInput& in, size_t rows, int32_t vocab);

// Per-thread candidate buffers, grown to the vocabulary once and kept across steps.
class SamplerScratch {
 public:
  struct Candidate {
    double weight;
    int32_t id;
  };
  std::vector<Candidate> candidates;
  std::vector<Candidate> partitioned;  // the selections' work buffer (selection.h)
  std::vector<std::pair<int32_t, float>> saved;  // (token, value before a penalty)
};
class SamplerScratchPool {
 public:
  // Makes one scratch per thread (called before the threads run).
  void ensure(int threads);
  SamplerScratch& at(int thread) { return *per_thread_[static_cast<size_t>(thread)]; }

 private:
  std::vector<std::unique_ptr<SamplerScratch>> per_thread_;
};

// Waits (this thread) until JavaScript has filled the step's masks: *masks_ready
// becomes nonzero. False after `timeout_ms` (then the masked rows are not sampled
// here, and the engine samples them).
bool wait_for_masks(const int32_t* masks_ready, int timeout_ms);

// Samples every row `in.rows` asks for, rows spread over the pool's threads.
// A row with a mask is masked first (its logits stay masked: what the engine's
// JS path reads too), after the check for NaN and infinities.
void sample_rows(const SamplingInput& in, float* logits, size_t rows, int32_t vocab, ThreadPool& pool, SamplerScratchPool& scratch,
                 SamplingOutput& out);

// One row (the test hook and sample_rows; kernels: which row passes, exp_rows.h): writes token, flags, stats[2],
// top[params[kLogprobs]]. mask: null, or the row's grammar mask (applied after the finite check, as the engine's guided path).
void sample_row(SampleKernels kernels, float* row, int32_t vocab, const double* params, const int32_t* seen, size_t num_seen, const int32_t* counted,
                const int32_t* counts, size_t num_counted, SamplerScratch& scratch, int32_t& token, uint8_t& flags, double* stats,
                int32_t* top, const uint32_t* mask = nullptr);

}  // namespace weft
