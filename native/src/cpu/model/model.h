// The CPU model: configuration, weights, the paged KV cache (and a hybrid
// model's linear-attention states) and one step's input. forward.cc runs a
// step (linear_attention.cc its Gated DeltaNet layers); weights.cc holds the
// weight slots and weight_load.cc loads them; kv_cache.cc the cache,
// linear_state.cc the states; binding.cc exposes it all to JavaScript.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "model/config.h"
#include "model/kv_cache.h"
#include "model/linear_state.h"
#include "model/step_state.h"
#include "model/weights.h"

namespace weft {

// One step, copied out of the JS typed arrays (see src/backends/backend.ts).
struct StepInput {
  std::vector<int32_t> input_ids, positions;            // [T]
  std::vector<int32_t> token_type_ids;                  // [T] or empty (all 0): encoders' segment ids
  std::vector<int32_t> past_lens;                       // [B]
  std::vector<int32_t> subsequence_begins;              // [B + 1]
  std::vector<int32_t> block_indices;                   // flattened block tables
  std::vector<int32_t> block_indices_begins;            // [B + 1]
  int64_t max_context_len = 0;
  std::vector<int32_t> logits_indices;                  // [R], strictly ascending token indices
  std::vector<uint8_t> argmax_rows;                     // [R] or empty: nonzero where the caller wants that row's argmax
  std::vector<int32_t> hidden_indices;                  // [E] token indices whose final hidden state is wanted (embeddings)
  std::vector<int32_t> block_copies;                    // (src, dst) pairs
  std::vector<int32_t> state_slots;                     // [B] linear-state slot per sequence (hybrid models), else empty
  // Hybrid models with checkpoints: each sequence's checkpoint table (block j:
  // its state after (j + 1) * checkpoint_interval tokens), flattened, and where
  // nonzero, that its slot is first loaded from its checkpoint at pastLen.
  std::vector<int32_t> checkpoint_indices, checkpoint_begins;  // begins [B + 1]
  std::vector<uint8_t> from_checkpoint;                         // [B] or empty
};

struct Model {
  ModelConfig config;
  MappedFiles mapped_files;  // the files weights are used from in place (declared first: destroyed after the weights)
  Weights weights;
  KvCache cache;
  LinearState linear;       // hybrid models' per-sequence linear-attention states (empty otherwise)
  LinearState checkpoints;  // copies of states at checkpoint boundaries (prefix caching on hybrids; else empty)
  int checkpoint_interval = 0;  // tokens between checkpoints
  std::unique_ptr<ThreadPool> pool;
  // The buffers of the step being run, kept for the next one (grown, never
  // shrunk: step_state.h); only forward() touches them, one step at a time.
  StepState step;
};

// Checks every length, offset and index of a step against the model and cache.
// Returns "" when forward() may run it, else a message naming the first problem.
std::string validate_step(const Model& model, const StepInput& step);

// Runs a validated step; writes [logits_indices.size() * vocab] floats to
// logits and [hidden_indices.size() * hidden] to hidden: each asked token's
// hidden state after the final norm (what the LM head reads; embeddings).
void forward(Model& model, const StepInput& step, float* logits, float* hidden);

}  // namespace weft
