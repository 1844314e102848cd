// Greedy decoding's pick of a logits row, taken on the step's worker thread
// (binding.cc) so the engine does not scan 151,936 floats per row in JavaScript
// (StepBatch.argmaxRows -> StepResult.argmax, src/backends/backend.ts).
//
// The rule is src/sampling/sampler.ts argmax's, which the engine would apply:
// keep the first value greater than every earlier one. Ties go to the lowest
// index, -0 and +0 tie, NaNs are passed over, and a row that starts with NaN
// gives 0 (nothing compares greater than it). A plain scan: the CPU addon's
// vector kernels belong to its own kernel sets, not to this addon.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft_ov {

// n >= 1.
int32_t greedy_pick(const float* row, size_t n);

}  // namespace weft_ov
