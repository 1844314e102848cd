// The linear-attention states of a hybrid model (Qwen3.5): the engine's second
// pool ("linear-state", one block per running sequence, src/backends/backend.ts
// ExtraPoolSpec), held here as one slot per block number.
//
// The third pool, "checkpoints", is a LinearState too: slot j holds a copy of
// some sequence's state after a multiple of checkpoint_interval tokens.
//
// A slot holds, for each Gated DeltaNet layer of the model in order:
//   conv   [conv_kernel - 1][conv_dim]  the last K-1 pre-conv inputs (oldest first)
//   delta  [value_heads][key_dim][value_dim]  the recurrent state S of each value head
// all float32 (the precision transformers keeps them in).
//
// Invariants:
//  L1. A sequence's slot describes exactly its first pastLen tokens. forward()
//      zeroes it when a sequence starts (pastLen 0) and advances it by the
//      step's tokens, so a slot handed to a new or resumed (recomputed)
//      sequence never carries a previous owner's state.
//  L2. One sequence per slot within a step (validate_step), so updates never race.
//  L3. A checkpoint is written only by the step that computes its boundary
//      token, into a block of the sequence's own checkpoint table; a sequence
//      resuming from a prefix hit loads its slot from the checkpoint at its
//      pastLen before the step (forward()), so it never runs on a stale state.
//  Block 0 is the null block, as in the KV cache: never a sequence's slot.
#pragma once
#include <cstddef>
#include <string>

#include "base/zeroed_array.h"
#include "model/config.h"

namespace weft {

struct LinearState {
  int num_slots = 0;  // including the null slot 0; 0 until allocated
  size_t conv_floats = 0, delta_floats = 0;  // per layer
  int layers = 0;                            // linear-attention layers
  ZeroedArray<float> data;                   // [slot][layer][conv | delta]

  size_t layer_floats() const { return conv_floats + delta_floats; }
  float* conv(int slot, int linear_layer) { return &data[(static_cast<size_t>(slot) * layers + linear_layer) * layer_floats()]; }
  float* delta(int slot, int linear_layer) { return conv(slot, linear_layer) + conv_floats; }
  size_t slot_floats() const { return static_cast<size_t>(layers) * layer_floats(); }
  // Zeroes one sequence's state in every layer (L1).
  void reset(int slot);
  // Copies `slot` of `from` (same config) into `slot_here`, every layer.
  void copy_from(const LinearState& from, int slot, int slot_here);
};

// Bytes one slot takes for this config (what the TypeScript side reports as the
// pool's bytesPerBlock: src/backends/cpu/cpu-backend.ts).
double linear_state_slot_bytes(const ModelConfig& c);

// Replaces `state` with a zeroed one of `num_slots` slots (0 for a model without
// linear layers). `other_bytes`: what else the model holds, for the memory check.
// Returns "" or an error message (the old state is kept then).
std::string allocate_linear_state(LinearState& state, const ModelConfig& c, int num_slots, double other_bytes);

}  // namespace weft
