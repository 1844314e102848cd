// Validation of one step against the model and the KV cache.
//
// forward() trusts its input completely: it indexes the cache with block
// numbers and positions from JavaScript and the embedding with token ids. So
// every value it will use is checked here first, and a bad one becomes an
// error message (a rejected promise in JS), never an out-of-bounds access.
#include <algorithm>
#include <utility>

#include "model/model.h"

namespace weft {

static std::string at(const char* what, size_t i) { return std::string(what) + "[" + std::to_string(i) + "]"; }

// begins must be [0, ..., end], non-decreasing, with `count + 1` entries.
static std::string check_begins(const std::vector<int32_t>& begins, size_t count, size_t end, const char* name) {
  if (begins.size() != count + 1)
    return std::string(name) + " has " + std::to_string(begins.size()) + " entries, expected " +
           std::to_string(count + 1) + " (pastLens.length + 1)";
  if (begins[0] != 0) return std::string(name) + "[0] must be 0";
  for (size_t i = 0; i < count; ++i)
    if (begins[i + 1] < begins[i]) return at(name, i + 1) + " is smaller than the entry before it";
  if (static_cast<size_t>(begins[count]) != end)
    return std::string(name) + " must end at " + std::to_string(end) + ", ends at " + std::to_string(begins[count]);
  return "";
}

// A hybrid model's checkpoint tables (linear_state.h, L3): every block a real
// checkpoint slot, every boundary a step crosses has its block, no block written
// by two sequences, and a resume only from a checkpoint the sequence has.
static std::string validate_checkpoints(const Model& model, const StepInput& s) {
  const size_t B = s.past_lens.size();
  const LinearState& checkpoints = model.checkpoints;
  if (checkpoints.num_slots == 0) {
    if (!s.checkpoint_begins.empty() || !s.from_checkpoint.empty())
      return "checkpoint tables were given, but no checkpoint blocks are allocated (allocateCache's checkpointBlocks)";
    return "";
  }
  std::string e = check_begins(s.checkpoint_begins, B, s.checkpoint_indices.size(), "extraBlockTables['checkpoints'].begins");
  if (!e.empty()) return e;
  for (size_t k = 0; k < s.checkpoint_indices.size(); ++k)
    if (s.checkpoint_indices[k] < 1 || s.checkpoint_indices[k] >= checkpoints.num_slots)
      return at("checkpoint block", k) + " = " + std::to_string(s.checkpoint_indices[k]) + " is not a block in [1, " +
             std::to_string(checkpoints.num_slots) + ")";
  if (!s.from_checkpoint.empty() && s.from_checkpoint.size() != B)
    return "stateFromCheckpoint has " + std::to_string(s.from_checkpoint.size()) + " entries for " + std::to_string(B) + " sequences";
  const int64_t every = model.checkpoint_interval;
  std::vector<int32_t> written;
  for (size_t i = 0; i < B; ++i) {
    const int64_t past = s.past_lens[i], context = past + s.subsequence_begins[i + 1] - s.subsequence_begins[i];
    const int64_t have = s.checkpoint_begins[i + 1] - s.checkpoint_begins[i];
    if (context / every > have)
      return "sequence " + std::to_string(i) + " reaches " + std::to_string(context) + " tokens but has " + std::to_string(have) +
             " checkpoint blocks (one per " + std::to_string(every) + " tokens)";
    for (int64_t j = past / every; j < context / every; ++j) written.push_back(s.checkpoint_indices[s.checkpoint_begins[i] + j]);
    if (!s.from_checkpoint.empty() && s.from_checkpoint[i] != 0 && (past == 0 || past % every != 0))
      return "sequence " + std::to_string(i) + " resumes from a checkpoint at pastLen " + std::to_string(past) +
             ", which is not a checkpoint boundary (a positive multiple of " + std::to_string(every) + ")";
  }
  std::sort(written.begin(), written.end());
  const auto twice = std::adjacent_find(written.begin(), written.end());
  if (twice != written.end()) return "checkpoint block " + std::to_string(*twice) + " is written twice in one step";
  return "";
}

std::string validate_step(const Model& model, const StepInput& s) {
  const ModelConfig& c = model.config;
  const KvCache& cache = model.cache;
  if (cache.block_size <= 0) return "the KV cache is not allocated (call allocateCache first)";

  const size_t T = s.input_ids.size();
  const size_t B = s.past_lens.size();
  if (T == 0) return "the step has no tokens";
  if (s.positions.size() != T)
    return "positions has " + std::to_string(s.positions.size()) + " entries, inputIds has " + std::to_string(T);
  std::string e = check_begins(s.subsequence_begins, B, T, "subsequenceBegins");
  if (!e.empty()) return e;
  e = check_begins(s.block_indices_begins, B, s.block_indices.size(), "blockIndicesBegins");
  if (!e.empty()) return e;

  for (size_t t = 0; t < T; ++t) {
    if (s.input_ids[t] < 0 || s.input_ids[t] >= c.vocab)
      return at("inputIds", t) + " = " + std::to_string(s.input_ids[t]) + " is outside the vocabulary [0, " +
             std::to_string(c.vocab) + ")";
    if (s.positions[t] < 0) return at("positions", t) + " is negative";
  }

  // An encoder computes each sequence whole (encoder.cc): from position 0, in
  // this step, with no LM head; its position and token-type rows exist.
  if (c.encoder) {
    for (size_t i = 0; i < B; ++i)
      if (s.past_lens[i] != 0)
        return at("pastLens", i) + " = " + std::to_string(s.past_lens[i]) +
               ": an encoder attends both ways, so a sequence must be computed whole in one step (pastLen 0)";
    if (!s.logits_indices.empty()) return "an encoder has no LM head: logitsIndices must be empty";
    for (size_t t = 0; t < T; ++t)
      if (s.positions[t] >= c.max_positions)
        return at("positions", t) + " = " + std::to_string(s.positions[t]) + " is past the model's " +
               std::to_string(c.max_positions) + " position embeddings";
    if (!s.token_type_ids.empty() && s.token_type_ids.size() != T)
      return "tokenTypeIds has " + std::to_string(s.token_type_ids.size()) + " entries, inputIds has " + std::to_string(T);
    for (size_t t = 0; t < s.token_type_ids.size(); ++t)
      if (s.token_type_ids[t] < 0 || s.token_type_ids[t] >= c.type_vocab)
        return at("tokenTypeIds", t) + " = " + std::to_string(s.token_type_ids[t]) + " is not a token type in [0, " +
               std::to_string(c.type_vocab) + ")";
  } else if (!s.token_type_ids.empty()) {
    return "tokenTypeIds were given, but this model is not an encoder";
  }

  // Every block table entry is a real block: 1 <= b < num_blocks (0 is the null block).
  for (size_t k = 0; k < s.block_indices.size(); ++k)
    if (s.block_indices[k] < 1 || s.block_indices[k] >= cache.num_blocks)
      return at("blockIndices", k) + " = " + std::to_string(s.block_indices[k]) + " is not a block in [1, " +
             std::to_string(cache.num_blocks) + ")";

  // Per sequence: past + new tokens fit in its blocks, so every cache slot that
  // forward() reads or writes (position p -> table[p / block_size]) exists.
  int64_t max_context = 0;
  std::vector<std::pair<int32_t, size_t>> written;  // (block, sequence) for blocks this step writes
  for (size_t i = 0; i < B; ++i) {
    if (s.past_lens[i] < 0) return at("pastLens", i) + " is negative";
    const int64_t fresh = s.subsequence_begins[i + 1] - s.subsequence_begins[i];
    const int64_t context = static_cast<int64_t>(s.past_lens[i]) + fresh;
    const int64_t blocks = s.block_indices_begins[i + 1] - s.block_indices_begins[i];
    if (context > blocks * cache.block_size)
      return "sequence " + std::to_string(i) + " needs " + std::to_string(context) + " cache slots but its " +
             std::to_string(blocks) + " blocks hold " + std::to_string(blocks * cache.block_size);
    // Within a sequence every position has its own slot, so its blocks are
    // distinct. This also bounds the context (and every scratch buffer sized
    // from it) by the cache's real size: no huge pastLen over a repeated block.
    const int64_t used = (context + cache.block_size - 1) / cache.block_size;
    std::vector<int32_t> table(s.block_indices.begin() + s.block_indices_begins[i],
                               s.block_indices.begin() + s.block_indices_begins[i] + used);
    std::sort(table.begin(), table.end());
    if (std::adjacent_find(table.begin(), table.end()) != table.end())
      return "sequence " + std::to_string(i) + " lists block " + std::to_string(*std::adjacent_find(table.begin(), table.end())) +
             " twice in its block table";
    max_context = std::max(max_context, context);
    if (fresh > 0) {
      const int64_t first = s.past_lens[i] / cache.block_size, last = (context - 1) / cache.block_size;
      for (int64_t b = first; b <= last; ++b) written.emplace_back(s.block_indices[s.block_indices_begins[i] + b], i);
    }
  }
  if (s.max_context_len != max_context)
    return "maxContextLen is " + std::to_string(s.max_context_len) + " but the longest sequence reaches " +
           std::to_string(max_context);

  // Two sequences writing one block would race (and corrupt each other's cache).
  std::sort(written.begin(), written.end());
  for (size_t k = 1; k < written.size(); ++k)
    if (written[k].first == written[k - 1].first && written[k].second != written[k - 1].second)
      return "block " + std::to_string(written[k].first) + " is written by sequences " +
             std::to_string(written[k - 1].second) + " and " + std::to_string(written[k].second) + " in one step";

  for (size_t r = 0; r < s.logits_indices.size(); ++r) {
    const int32_t v = s.logits_indices[r];
    if (v < 0 || static_cast<size_t>(v) >= T)
      return at("logitsIndices", r) + " = " + std::to_string(v) + " is outside [0, " + std::to_string(T) + ")";
    if (r > 0 && v <= s.logits_indices[r - 1]) return "logitsIndices must be strictly ascending";
  }
  for (size_t e = 0; e < s.hidden_indices.size(); ++e)
    if (s.hidden_indices[e] < 0 || s.hidden_indices[e] >= T)
      return at("hiddenIndices", e) + " = " + std::to_string(s.hidden_indices[e]) + " is outside [0, " + std::to_string(T) + ")";
  if (!s.argmax_rows.empty() && s.argmax_rows.size() != s.logits_indices.size())
    return "argmaxRows has " + std::to_string(s.argmax_rows.size()) + " entries, logitsIndices has " +
           std::to_string(s.logits_indices.size());

  // Hybrid models: one linear-state slot per sequence, a real one, never shared
  // within the step (linear_state.h, L2).
  if (c.linear_layers() > 0) {
    const LinearState& state = model.linear;
    if (state.num_slots == 0) return "the linear-attention states are not allocated (allocateCache with linearStateBlocks)";
    if (s.state_slots.size() != B)
      return "this hybrid model needs one linear-state block per sequence (extraBlockTables['linear-state']): got " +
             std::to_string(s.state_slots.size()) + " for " + std::to_string(B) + " sequences";
    std::vector<int32_t> slots = s.state_slots;
    for (size_t i = 0; i < B; ++i)
      if (slots[i] < 1 || slots[i] >= state.num_slots)
        return at("linear-state block", i) + " = " + std::to_string(slots[i]) + " is not a block in [1, " +
               std::to_string(state.num_slots) + ")";
    std::sort(slots.begin(), slots.end());
    const auto twice = std::adjacent_find(slots.begin(), slots.end());
    if (twice != slots.end()) return "linear-state block " + std::to_string(*twice) + " is given to two sequences in one step";
    e = validate_checkpoints(model, s);
    if (!e.empty()) return e;
  } else if (!s.state_slots.empty() || !s.checkpoint_begins.empty() || !s.from_checkpoint.empty()) {
    return "linear-state or checkpoint tables were given, but this model has no linear-attention layers";
  }

  if (s.block_copies.size() % 2 != 0) return "blockCopies must hold (src, dst) pairs";
  for (size_t k = 0; k < s.block_copies.size(); ++k)
    if (s.block_copies[k] < 1 || s.block_copies[k] >= cache.num_blocks)
      return at("blockCopies", k) + " = " + std::to_string(s.block_copies[k]) + " is not a block in [1, " +
             std::to_string(cache.num_blocks) + ")";
  return "";
}

}  // namespace weft
