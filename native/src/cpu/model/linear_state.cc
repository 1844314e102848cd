// The linear-attention state slots (see linear_state.h).
#include "model/linear_state.h"

#include <cstring>
#include <new>

#include "model/kv_cache.h"

namespace weft {

void LinearState::reset(int slot) { std::memset(conv(slot, 0), 0, slot_floats() * sizeof(float)); }

void LinearState::copy_from(const LinearState& from, int slot, int slot_here) {
  std::memcpy(conv(slot_here, 0), &from.data[static_cast<size_t>(slot) * from.slot_floats()], slot_floats() * sizeof(float));
}

double linear_state_slot_bytes(const ModelConfig& c) {
  const double conv = static_cast<double>(c.conv_kernel - 1) * c.conv_dim();
  const double delta = static_cast<double>(c.lin_value_heads) * c.lin_key_dim * c.lin_value_dim;
  return 4.0 * c.linear_layers() * (conv + delta);
}

std::string allocate_linear_state(LinearState& state, const ModelConfig& c, int num_slots, double other_bytes) {
  if (c.linear_layers() == 0) {
    if (num_slots != 0) return "this model has no linear-attention layers: it takes no linear-state or checkpoint blocks";
    state = LinearState{};
    return "";
  }
  if (num_slots == 0) {  // allowed for checkpoints (none without prefix caching); the state pool is checked by the caller
    state = LinearState{};
    return "";
  }
  if (num_slots < 2) return "a hybrid model's state pools need at least 2 blocks each (block 0 is the null block)";
  const double bytes = linear_state_slot_bytes(c) * num_slots;
  const double ram = physical_memory_bytes();
  if (ram > 0 && other_bytes + bytes > ram)
    return "linear-attention states of " + std::to_string(static_cast<uint64_t>(bytes)) + " bytes, with the weights and the KV cache, exceed the physical memory";
  LinearState fresh;
  fresh.num_slots = num_slots;
  fresh.layers = c.linear_layers();
  fresh.conv_floats = static_cast<size_t>(c.conv_kernel - 1) * c.conv_dim();
  fresh.delta_floats = static_cast<size_t>(c.lin_value_heads) * c.lin_key_dim * c.lin_value_dim;
  try {
    fresh.data = ZeroedArray<float>(static_cast<size_t>(num_slots) * fresh.layers * fresh.layer_floats());
  } catch (const std::bad_alloc&) {
    return "out of memory allocating " + std::to_string(num_slots) + " linear-attention state slots";
  }
  state = std::move(fresh);
  return "";
}

}  // namespace weft
