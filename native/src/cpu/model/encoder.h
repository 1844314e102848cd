// The forward pass of a bidirectional encoder (BERT family): encoder.cc.
#pragma once
#include "model/model.h"
#include "model/step_state.h"

namespace weft {

// Runs a validated step of an encoder model (ModelConfig::encoder) whose
// StepState forward() has prepared; writes [hidden_indices.size() * hidden]
// floats to hidden: each asked token's output of the last layer (its final
// LayerNorm), unnormalised.
void encoder_forward(Model& model, const StepInput& s, StepState& st, float* hidden);

}  // namespace weft
