// A sparse mixture-of-experts feed-forward (Qwen3-Next's), as transformers'
// modeling_qwen3_next.py computes it; tools/hybrid/NOTES.md section 4.
#pragma once
#include "model/model.h"
#include "model/step_state.h"

namespace weft {

// xb = sum over the token's chosen experts e of w_e * expert_e(norm(x))
//      + sigmoid(shared_expert_gate . norm(x)) * shared_expert(norm(x))
// for one mixture-of-experts layer, after adding the mixer's output (in xb) to x.
void moe_block(Model& model, StepState& st, int layer);

}  // namespace weft
