// A Gated DeltaNet layer (Qwen3.5's linear attention), as transformers'
// modeling_qwen3_5.py computes it; tools/hybrid/NOTES.md is the spec.
#pragma once
#include "model/model.h"
#include "model/step_state.h"

namespace weft {

// xb = out_proj(gated_norm(delta_rule(conv(in_proj_qkv(norm(x)))), z)) for one
// linear-attention layer, after adding the previous layer's output to x;
// advances each sequence's conv and recurrent state (linear_state.h) by its
// tokens of this step.
void linear_attention_block(Model& model, const StepInput& s, StepState& st, int layer);

}  // namespace weft
